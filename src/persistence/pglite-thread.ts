import { Worker } from 'node:worker_threads';
import { workerScript } from '../lib/worker-pool';
import type { ByteaRows } from './pglite-bytes';

export type ThreadRequest = { id: number; sql?: string; parameters?: unknown[]; byteaRows?: true; close?: true; arm?: string };
export type ThreadReply = { id: number; rows?: unknown[]; affectedRows?: number; error?: Record<string, unknown> };

/** What the Kysely dialect needs of PGlite (./pglite-dialect.ts): PGlite itself, or PGlite in its own thread. */
export type PGliteSession = {
  query<R>(sql: string, parameters?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  /** A statement whose columns are all `bytea`, read as raw bytes (./pglite-bytes.ts); PGlite itself has none, the dialect calls it there. */
  queryByteaRows?(sql: string, parameters?: unknown[]): Promise<ByteaRows>;
  close(): Promise<void>;
  readonly closed: boolean;
};

type Pending = { resolve: (reply: ThreadReply) => void; reject: (error: Error) => void };

/**
 * Embedded PGlite in a thread of its own. PGlite runs every statement
 * synchronously inside WebAssembly, in whichever thread owns it: in the
 * serving thread, a checkpoint's or a large commit's file writes (seconds)
 * held every socket and timer, and under a typing client most of the
 * server's CPU was PGlite's. Here the serving thread sends each statement
 * and its parameters and awaits the rows; byte values come back moved, not
 * copied. Statements run one at a time in order, as the dialect's
 * one-session lock already required.
 *
 * A flush that fails ends the database thread (./durable-fs.ts), and the
 * process with it, as it would in one thread: a restart recovers from the
 * write-ahead log.
 */
export class PGliteThread implements PGliteSession {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;
  closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly onStopped: (code: number) => void,
  ) {
    worker.on('message', (reply: ThreadReply) => {
      const pending = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      pending?.resolve(reply);
    });
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', (code) => {
      this.closed = true;
      this.failAll(new Error(`The database thread stopped (exit code ${code}).`));
      if (!this.closing) onStopped(code);
    });
  }

  /**
   * Starts the thread and opens the database in it (copying `template` into
   * a fresh `dir`). `onStopped`: the thread ended without being closed (a
   * failed flush); the process ends unless a test says otherwise.
   */
  static async open(dir: string, template?: string, onStopped: (code: number) => void = endProcess): Promise<PGliteThread> {
    const script = workerScript(import.meta.url, 'pglite-thread-worker');
    const options = { workerData: { dir, template } };
    const worker = 'url' in script ? new Worker(script.url, options) : new Worker(script.source, { ...options, eval: true });
    const thread = new PGliteThread(worker, onStopped);
    const opened = await thread.send({ id: 0 }).catch((error: Error) => ({ id: 0, error: { message: error.message } }) as ThreadReply);
    if (opened.error) {
      thread.closing = true;
      await worker.terminate();
      throw rebuiltError(opened.error);
    }
    return thread;
  }

  async query<R>(sql: string, parameters?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }> {
    if (this.closed) throw new Error('The embedded database is closed.');
    const reply = await this.send({ id: this.nextId++, sql, parameters });
    if (reply.error) throw rebuiltError(reply.error);
    return { rows: reply.rows as R[], affectedRows: reply.affectedRows };
  }

  async queryByteaRows(sql: string, parameters?: unknown[]): Promise<ByteaRows> {
    if (this.closed) throw new Error('The embedded database is closed.');
    const reply = await this.send({ id: this.nextId++, sql, parameters, byteaRows: true });
    if (reply.error) throw rebuiltError(reply.error);
    return reply.rows as ByteaRows;
  }

  async close(): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    // PGlite closes in its thread (its last writes flushed); the thread itself may hold handles that would keep it alive.
    await this.send({ id: this.nextId++, close: true }).catch(() => {});
    await this.worker.terminate();
    this.closed = true;
  }

  /** Arms a failpoint inside the database thread (`database.flush`: src/lib/failpoints.ts). Tests only. */
  async armFailpoint(name: string): Promise<void> {
    await this.send({ id: this.nextId++, arm: name });
  }

  /** Request 0 is the open: its reply comes unasked, once the database is ready. */
  private send(request: ThreadRequest): Promise<ThreadReply> {
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      // A statement in flight keeps the process alive (a command may await nothing else); an idle database does not.
      this.worker.ref();
      if (request.id !== 0) this.worker.postMessage(request);
    });
  }

  private failAll(error: Error) {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}

function endProcess(code: number) {
  console.error(`Trellis: the embedded database stopped (exit code ${code}); exiting so that a restart recovers from the write-ahead log`);
  process.exit(code === 0 ? 70 : code);
}

/** The database's error as the caller would have seen it in one thread: its message, with its code, constraint and detail. */
function rebuiltError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message ?? 'database error')), fields);
}
