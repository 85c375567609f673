import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The embedded database's next WAL segment, made ahead of time off the
 * serving thread.
 *
 * When Postgres fills a WAL segment it opens the next one, and when that
 * file does not exist yet it makes it inside the statement whose commit
 * crossed the boundary: a temporary file written full of zeros (16 MB, in
 * small writes), flushed, renamed into place and the directory flushed. A
 * server cluster's checkpointer usually has one waiting (recycled or
 * preallocated); PGlite runs Postgres single-user, with no checkpointer, so
 * every 16 MB of WAL paid it in one synchronous call on the thread that runs
 * PGlite: the trace's two longest turns, 66-115 ms of CPU (docs/PERFORMANCE.md,
 * session 20, h20-pauses).
 *
 * Postgres uses a segment file it finds in place as it is (`XLogFileInit`
 * opens an existing one before it creates any), and a zero-filled file is
 * what it would have made itself. So when Postgres opens a segment, the
 * segment after it is written here with Node's asynchronous file calls (the
 * libuv pool's threads, a dozen calls each answered in a turn of the event loop), flushed, and linked into place under its name only
 * if that name is still free (a link never replaces a file: a segment
 * Postgres made meanwhile stays), then the directory is flushed. A
 * temporary file is named `xlogtemp.*`, which Postgres deletes at start if a
 * crash left one. Any failure leaves things as they were: Postgres then
 * makes the segment itself.
 *
 * The segment after the one a database opens with is made a few seconds
 * later, not while the server starts: 16 MB allocated, written and flushed
 * there took ~0.25 s of a start's CPU on one core (page faults and the
 * write), for a segment that a starting server does not reach
 * (docs/PERFORMANCE.md, issue 38, session 23).
 */
export class WalPreallocation {
  /** The segment being made (one at a time), until it is done or given up. */
  private making: Promise<void> | null = null;
  /** Segments made here (a test's and a bench's count). */
  made = 0;
  /** The segment Postgres opened last; none yet until the one the database opens with. */
  private latest = '';
  /** Cancels the wait before the first segment's successor is made (closing does not wait for it). */
  private cancelStartDelay: (() => void) | null = null;

  constructor(
    private readonly onError: (error: unknown) => void = () => {},
    /** How long after the database opens its first segment's successor is made (a test's is longer than its open). */
    private readonly startDelayMs = START_DELAY_MS,
  ) {}

  /** Postgres opened `file`: when it is a WAL segment, makes the one after it ahead of time. */
  opened(file: string): void {
    const name = path.basename(file);
    if (!SEGMENT_NAME.test(name) || path.basename(path.dirname(file)) !== 'pg_wal') return;
    const first = this.latest === '';
    this.latest = file;
    if (this.making) return;
    const due = first ? this.afterStart() : Promise.resolve(true);
    // After the wait, the successor of the segment open then (Postgres may have moved on meanwhile).
    this.making = due
      .then((go) => (go ? this.make(path.dirname(this.latest), path.basename(this.latest)) : undefined))
      .catch((error) => this.onError(error))
      .finally(() => {
        this.making = null;
      });
  }

  /** Resolves once no segment is being made (or waits to be). */
  async settled(): Promise<void> {
    await this.making;
  }

  /** Closing: a segment that waits to be made is not made; one being made is finished. */
  async stop(): Promise<void> {
    this.cancelStartDelay?.();
    await this.making;
  }

  private afterStart(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      // The wait alone does not keep a process alive (a tool that opened the database and is done).
      const timer = setTimeout(() => resolve(true), this.startDelayMs).unref();
      this.cancelStartDelay = () => {
        clearTimeout(timer);
        resolve(false);
      };
    }).finally(() => {
      this.cancelStartDelay = null;
    });
  }

  private async make(dir: string, current: string): Promise<void> {
    const size = (await fs.stat(path.join(dir, current))).size;
    // A segment is a power of two from 1 MB to 1 GB; a file still being made by Postgres is not yet its size.
    if (size < MIN_SEGMENT_BYTES || size > MAX_SEGMENT_BYTES || (size & (size - 1)) !== 0) return;
    const next = nextSegmentName(current, 2 ** 32 / size);
    if (next === null) return;
    const target = path.join(dir, next);
    if (await exists(target)) return;
    const temporary = path.join(dir, `xlogtemp.trellis-${process.pid}`);
    const file = await fs.open(temporary, 'w', 0o600);
    try {
      // A few large writes (each call's answer waits for a turn of this thread's event loop) from one small buffer: one
      // 16 MB buffer counted as 16 MB of external memory toward V8's next full collection, a 60 ms turn of the serving
      // thread when it fell under load (session 23).
      const zeros = Buffer.alloc(Math.min(size, ZERO_WRITE_BYTES));
      for (let offset = 0; offset < size; offset += zeros.length) await file.write(zeros, 0, Math.min(zeros.length, size - offset), offset);
      await file.datasync();
    } finally {
      await file.close();
    }
    try {
      await fs.link(temporary, target);
      this.made++;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    } finally {
      await fs.unlink(temporary).catch(() => {});
    }
    const directory = await fs.open(dir, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }
}

/** The zeros written at a time. */
const ZERO_WRITE_BYTES = 2 * 1024 * 1024;

/** How long after the database opens its first segment's successor is made: past a start (~3 s on one core). */
const START_DELAY_MS = 5_000;

/** A WAL segment's name: timeline, then the segment number as two 8-digit hex halves. */
const SEGMENT_NAME = /^[0-9A-F]{24}$/;
/** Postgres's segment sizes (1 MB to 1 GB, powers of two). */
const MIN_SEGMENT_BYTES = 1024 * 1024;
const MAX_SEGMENT_BYTES = 1024 * 1024 * 1024;

/** The name of the segment after `name` (`segmentsPerLog`: 2^32 over the segment size, 256 for 16 MB), or null past the last. */
export function nextSegmentName(name: string, segmentsPerLog: number): string | null {
  const timeline = name.slice(0, 8);
  let log = parseInt(name.slice(8, 16), 16);
  let segment = parseInt(name.slice(16, 24), 16) + 1;
  if (segment >= segmentsPerLog) {
    segment = 0;
    log++;
  }
  if (log > 0xffffffff) return null;
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');
  return `${timeline}${hex(log)}${hex(segment)}`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch {
    return false;
  }
}
