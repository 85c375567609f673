import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable, Transform } from 'node:stream';
import type { Config } from '../config';
import type { BlobBody, BlobStore, PresignedUpload, StoredBlob } from './blob-store';

type S3Config = NonNullable<Config['s3']>;

/** Objects above this size are sent in parts by `put` (streams of unknown length always are). */
const PART_SIZE = 8 * 1024 * 1024;

/**
 * Blobs in an S3 bucket (AWS or any S3-compatible store: MinIO, R2,
 * s3rver in the tests). Checksums are computed only when an operation
 * requires them: S3-compatible stores that do not know the newer
 * checksum headers store streamed uploads corrupted otherwise
 * (STACK-NOTES, "Files").
 */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: BlobBody, contentType: string): Promise<{ size: number }> {
    if (body instanceof Uint8Array && body.byteLength <= PART_SIZE) {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }));
      return { size: body.byteLength };
    }
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.byteLength;
        done(null, chunk);
      },
    });
    const source = body instanceof Uint8Array ? Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)]) : body;
    source.on('error', (error) => counter.destroy(error));
    source.pipe(counter);
    // A multipart upload that fails is aborted by the SDK (leavePartsOnError false): nothing is left.
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: counter, ContentType: contentType }, partSize: PART_SIZE });
    await upload.done();
    return { size };
  }

  async get(key: string): Promise<StoredBlob | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { body: object.Body as Readable, contentType: object.ContentType ?? 'application/octet-stream', size: object.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async stat(key: string): Promise<{ size: number; contentType: string } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async presignPut(key: string, options: { contentType: string; contentLength?: number; expiresInSeconds: number }): Promise<PresignedUpload> {
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: options.contentType, ContentLength: options.contentLength });
    // Signing the type makes a PUT with another Content-Type fail at the store.
    const url = await getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds, signableHeaders: new Set(['content-type']) });
    return {
      url,
      method: 'PUT',
      headers: { 'content-type': options.contentType },
      expiresAt: new Date(Date.now() + options.expiresInSeconds * 1000),
    };
  }

  async presignGet(key: string, options: { expiresInSeconds: number }): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: options.expiresInSeconds });
  }

  close() {
    this.client.destroy();
  }
}

function isMissing(error: unknown): boolean {
  if (error instanceof S3ServiceException) return error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound';
  return false;
}
