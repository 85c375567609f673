import path from 'node:path';
import type { Config } from '../config';
import { LocalBlobStore, type BlobStore } from './blob-store';

/**
 * The configured store: S3 (or any S3-compatible store) when S3_BUCKET is
 * set, else files under DATA_DIR/blobs. The AWS SDK is loaded only then:
 * it takes a second or more to import, which every process start (the
 * server, the admin CLI) would otherwise pay.
 */
export async function createBlobStore(config: Pick<Config, 'dataDir' | 's3'>): Promise<BlobStore> {
  if (config.s3) return new (await import('./s3-blob-store')).S3BlobStore(config.s3);
  return new LocalBlobStore(path.join(config.dataDir, 'blobs'));
}
