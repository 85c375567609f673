import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

/**
 * How a version's content is stored: its JSON, compressed with gzip. A
 * module of its own (no database client in it) so the history thread
 * (src/sync/history-worker.ts) encodes and reads contents without loading
 * the query builder.
 */

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export type EncodedContent = { bytes: Uint8Array; size: number };

export async function encodeContent(content: unknown): Promise<EncodedContent> {
  const text = Buffer.from(JSON.stringify(content), 'utf8');
  return { bytes: new Uint8Array(await gzipAsync(text)), size: text.byteLength };
}

export async function decodeContent<T>(bytes: Uint8Array): Promise<T> {
  return JSON.parse((await gunzipAsync(bytes)).toString('utf8')) as T;
}
