import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { Failpoints } from '../lib/failpoints';
import { ownsWholeBuffer } from '../lib/worker-pool';
import { DurableNodeFS, durableStorage } from './durable-fs';
import { queryByteaRows } from './pglite-bytes';
import { createPGlite } from './pglite-instance';
import type { ThreadReply, ThreadRequest } from './pglite-thread';

/**
 * The database thread's side (./pglite-thread.ts): opens PGlite and runs
 * the statements the serving thread sends, one at a time, in order.
 */
const port = parentPort!;
const { dir, template } = workerData as { dir: string; template?: string };

/** `database.flush` (src/lib/failpoints.ts): a test makes the next flush fail, as a failing disk would. */
const failpoints = new Failpoints();
class FailpointDisk extends DurableNodeFS {
  protected override flush(fd: number, directory: boolean) {
    try {
      failpoints.hit('database.flush');
    } catch {
      // As the disk reports it: Postgres sees the errno, as from a real fsync.
      throw Object.assign(new Error('EIO: i/o error, fsync (failpoint database.flush)'), { code: 'EIO' });
    }
    super.flush(fd, directory);
  }
}

let pglite: PGlite;
try {
  pglite = await createPGlite(dir, template, { ...durableStorage, filesystem: (directory) => new FailpointDisk(directory) });
  port.postMessage({ id: 0, rows: [] } satisfies ThreadReply);
} catch (error) {
  port.postMessage({ id: 0, error: errorFields(error) } satisfies ThreadReply);
}

port.on('message', async (request: ThreadRequest) => {
  if (request.arm) {
    failpoints.arm(request.arm);
    port.postMessage({ id: request.id, rows: [] } satisfies ThreadReply);
    return;
  }
  if (request.close) {
    try {
      await pglite.close();
      port.postMessage({ id: request.id, rows: [] } satisfies ThreadReply);
    } catch (error) {
      port.postMessage({ id: request.id, error: errorFields(error) } satisfies ThreadReply);
    }
    return;
  }
  try {
    if (request.byteaRows) {
      const rows = await queryByteaRows(pglite, request.sql!, request.parameters);
      port.postMessage({ id: request.id, rows } satisfies ThreadReply, transferables(rows));
      return;
    }
    const result = await pglite.query(request.sql!, request.parameters);
    port.postMessage({ id: request.id, rows: result.rows, affectedRows: result.affectedRows } satisfies ThreadReply, transferables(result.rows));
  } catch (error) {
    port.postMessage({ id: request.id, error: errorFields(error) } satisfies ThreadReply);
  }
});

/** A Postgres error's fields (code, constraint, detail...): callers read them, and the class does not cross the thread. */
function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  for (const [key, value] of Object.entries(error)) if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  return fields;
}

/** Byte values (bytea) that own their whole buffer move to the serving thread instead of being copied. */
function transferables(rows: unknown[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue;
    for (const value of Object.values(row)) {
      if (value instanceof Uint8Array && ownsWholeBuffer(value)) buffers.add(value.buffer as ArrayBuffer);
    }
  }
  return [...buffers];
}
