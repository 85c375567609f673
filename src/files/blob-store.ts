import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config';
import { randomToken } from '../lib/secrets';

/**
 * Where uploaded bytes live: files, thumbnails, doc images, avatars. Keys are opaque to
 * the store; callers choose them (random and unguessable for anything served
 * without a credential). The interface is the S3 one cut down: bodies are
 * bytes or streams both ways, `contentType` travels with the object, and a
 * store that can hand out direct URLs (S3 presigning) implements the
 * optional `presign*` methods; the local store cannot and leaves them out,
 * so callers proxy the bytes through the server instead.
 */

export type BlobBody = Uint8Array | Readable;

export type StoredBlob = {
  body: Readable;
  contentType: string;
  size: number;
};

export type PresignedUpload = { url: string; method: 'PUT'; headers: Record<string, string>; expiresAt: Date };

export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Stores `body` under `key` (replacing what was there) once it is complete; a failed write leaves nothing. */
  put(key: string, body: BlobBody, contentType: string): Promise<{ size: number }>;
  /** The object as a stream, or null when there is none. */
  get(key: string): Promise<StoredBlob | null>;
  /** Size and type without the bytes, or null when there is no object. */
  stat(key: string): Promise<{ size: number; contentType: string } | null>;
  exists(key: string): Promise<boolean>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** A URL the client PUTs the bytes to directly (S3); absent when the store cannot. */
  presignPut?(key: string, options: { contentType: string; contentLength?: number; expiresInSeconds: number }): Promise<PresignedUpload>;
  /** A URL the client GETs the bytes from directly (S3); absent when the store cannot. */
  presignGet?(key: string, options: { expiresInSeconds: number }): Promise<string>;
  /** Releases connections (S3); absent when there is nothing to release. */
  close?(): void;
}

/** Keys are `/`-separated segments of letters, digits, `.`, `_` and `-`, none starting with `.` (so never `..`). */
const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

export function isValidBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= 512 && KEY_PATTERN.test(key);
}

function assertKey(key: string) {
  if (!isValidBlobKey(key)) throw new TypeError(`invalid blob key ${JSON.stringify(key)}`);
}

type LocalMeta = { contentType: string; size: number };

/**
 * Blobs as files under `root` (DATA_DIR/blobs): `<root>/<key>` holds the
 * bytes and `<root>/.meta/<key>.json` the content type. Writes go to
 * `<root>/.tmp` first and are renamed into place, so a reader never sees a
 * partial object and an interrupted upload leaves nothing behind.
 */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;

  constructor(private readonly root: string) {}

  private dataPath(key: string) {
    return path.join(this.root, ...key.split('/'));
  }

  private metaPath(key: string) {
    return path.join(this.root, '.meta', ...key.split('/')) + '.json';
  }

  async put(key: string, body: BlobBody, contentType: string): Promise<{ size: number }> {
    assertKey(key);
    const tmpDir = path.join(this.root, '.tmp');
    await fs.mkdir(tmpDir, { recursive: true });
    const tmpData = path.join(tmpDir, randomToken(12));
    const tmpMeta = `${tmpData}.json`;
    let size = 0;
    try {
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.byteLength;
          done(null, chunk);
        },
      });
      const source = body instanceof Uint8Array ? Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)]) : body;
      await pipeline(source, counter, createWriteStream(tmpData, { flags: 'wx' }));
      const meta: LocalMeta = { contentType, size };
      await fs.writeFile(tmpMeta, JSON.stringify(meta), { flag: 'wx' });
      const dataPath = this.dataPath(key);
      const metaPath = this.metaPath(key);
      await fs.mkdir(path.dirname(dataPath), { recursive: true });
      await fs.mkdir(path.dirname(metaPath), { recursive: true });
      // Metadata first: an object exists once its bytes are in place, and then its metadata already is.
      await fs.rename(tmpMeta, metaPath);
      await fs.rename(tmpData, dataPath);
      return { size };
    } finally {
      await fs.rm(tmpData, { force: true });
      await fs.rm(tmpMeta, { force: true });
    }
  }

  async get(key: string): Promise<StoredBlob | null> {
    if (!isValidBlobKey(key)) return null;
    let meta: LocalMeta;
    let handle: fs.FileHandle;
    try {
      meta = JSON.parse(await fs.readFile(this.metaPath(key), 'utf8')) as LocalMeta;
      handle = await fs.open(this.dataPath(key), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    let size: number;
    try {
      size = (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    // The stream owns the handle from here and closes it when done.
    return { body: handle.createReadStream(), contentType: meta.contentType, size };
  }

  async stat(key: string): Promise<{ size: number; contentType: string } | null> {
    if (!isValidBlobKey(key)) return null;
    try {
      const meta = JSON.parse(await fs.readFile(this.metaPath(key), 'utf8')) as LocalMeta;
      const { size } = await fs.stat(this.dataPath(key));
      return { size, contentType: meta.contentType };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    if (!isValidBlobKey(key)) return false;
    try {
      await fs.access(this.dataPath(key));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    assertKey(key);
    await fs.rm(this.dataPath(key), { force: true });
    await fs.rm(this.metaPath(key), { force: true });
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}
