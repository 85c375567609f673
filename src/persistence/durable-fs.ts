import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { flushPath, syncTree } from '../lib/flush';
import { WalPreallocation } from './wal-preallocation';

/**
 * Embedded PGlite that keeps what it acknowledged across a power cut.
 *
 * PGlite starts Postgres with `-F` (fsync off), and Emscripten's NODEFS has
 * no `fsync` stream operation, so `fsync()` inside the wasm reached no disk;
 * its `fdatasync()` syscall returns 0 without looking at the file at all.
 * Here Postgres runs with fsync on, its WAL is flushed with `fsync()`
 * (`wal_sync_method=fsync`: the one call that reaches the stream), and the
 * stream's fsync is the real one on the Node file descriptor. A failed fsync
 * comes back to Postgres as an errno, so it PANICs (data_sync_retry=off)
 * instead of acknowledging a commit that is not on disk.
 */

/** The parts of Emscripten's module that the file system layers patch (absent from PGlite's types). */
export type EmscriptenStream = { nfd: number; flags: number; node: EmscriptenNode };
export type EmscriptenNode = { mode: number; name: string; parent: EmscriptenNode };
export type EmscriptenNodeFs = {
  stream_ops: Record<string, (...args: any[]) => any>;
  node_ops: Record<string, (...args: any[]) => any>;
  realPath(node: EmscriptenNode): string;
  tryFSOperation<T>(operation: () => T): T;
};
export type EmscriptenModule = {
  NODEFS: EmscriptenNodeFs;
  FS: { isDir(mode: number): boolean; isFile(mode: number): boolean };
};

/** PGlite's NodeFS with NODEFS adjusted by `patch` first; each PGlite instance has its own module, so the patch stays with it. */
export abstract class PatchedNodeFS extends NodeFS {
  protected abstract patch(mod: EmscriptenModule): void;

  override async init(pg: Parameters<NodeFS['init']>[0], opts: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const patch = (mod: unknown) => this.patch(mod as EmscriptenModule);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [patch, ...(emscriptenOpts.preRun ?? [])] } };
  }
}

/**
 * NodeFS whose fsync is the operating system's. `onFailure` hears of a
 * failed flush just before Postgres gets the errno (and fails the commit).
 */
export class DurableNodeFS extends PatchedNodeFS {
  /** The next WAL segment made ahead of time, off this thread (./wal-preallocation.ts). */
  readonly walSegments: WalPreallocation;

  constructor(
    dataDir: string,
    private readonly onFailure: (error: unknown) => void = failStop,
    walStartDelayMs?: number,
  ) {
    super(dataDir);
    this.walSegments = new WalPreallocation(undefined, walStartDelayMs);
  }

  protected patch({ NODEFS, FS }: EmscriptenModule): void {
    const open = NODEFS.stream_ops.open!;
    NODEFS.stream_ops.open = (stream: EmscriptenStream) => {
      const opened = open(stream);
      // Only a WAL segment's open asks for its path: relation files open far more often.
      if (FS.isFile(stream.node.mode) && stream.node.parent.name === 'pg_wal') this.walSegments.opened(NODEFS.realPath(stream.node));
      return opened;
    };
    NODEFS.stream_ops.fsync = (stream: EmscriptenStream) => {
      // A Node error becomes an Emscripten errno (tryFSOperation), which fd_sync returns to Postgres.
      NODEFS.tryFSOperation(() => {
        const directory = FS.isDir(stream.node.mode);
        try {
          this.flush(stream.nfd, directory);
        } catch (error) {
          // Postgres ignores these for a directory (some file systems cannot flush one); so does the fail-stop.
          const code = (error as { code?: string }).code;
          if (!(directory && (code === 'EBADF' || code === 'EINVAL'))) this.onFailure(error);
          throw error;
        }
      });
      return 0;
    };
  }

  /** Closing waits for a segment being made ahead (the shutdown checkpoint opens segments too): a closed directory is still, for a copy of it. */
  override async closeFs(): Promise<void> {
    await this.walSegments.stop();
    await super.closeFs();
  }

  /** Flushes one open file or directory to stable storage (a test replaces it to make a flush fail). */
  protected flush(fd: number, directory: boolean): void {
    syncDescriptor(fd, directory);
  }
}

/**
 * Postgres PANICs on a failed flush (data_sync_retry=off: the kernel may have
 * dropped the dirty pages, so a retry could report success over lost data)
 * and a PostgreSQL server restarts and recovers from its WAL. An embedded
 * PGlite cannot restart inside the process and stops answering, so the
 * process ends, after the failed commit's caller has had a moment to hear of
 * it, and its supervisor's restart recovers.
 */
function failStop(error: unknown): void {
  console.error(`Trellis: the database could not flush a file to disk (${error instanceof Error ? error.message : String(error)}); exiting so that a restart recovers from the write-ahead log`);
  process.exitCode = 70;
  setTimeout(() => process.exit(70), 200);
}

/**
 * Regular files take fdatasync: it flushes the data and the size, all that
 * Postgres reads back (not timestamps), and spares a journal commit per WAL
 * flush on a preallocated segment. Directories take fsync (new and renamed
 * entries).
 */
function syncDescriptor(fd: number, directory: boolean): void {
  if (directory) fs.fsyncSync(fd);
  else fs.fdatasyncSync(fd);
}

/** How PGlite stores its data: the file system layer and Postgres's start parameters. */
export type PGliteStorage = {
  filesystem(dir: string): InstanceType<typeof NodeFS>;
  startParams: string[];
  /** Flushes a data directory that initdb just wrote (through the file system, without fsync). */
  syncNewDataDir?(dir: string): Promise<void>;
};

export const durableStorage: PGliteStorage = {
  filesystem: (dir) => new DurableNodeFS(dir),
  startParams: [...PGlite.defaultStartParams.filter((param) => param !== '-F'), '-c', 'wal_sync_method=fsync'],
  syncNewDataDir: syncTree,
};

/** PGlite as it ships: fsync off, no fsync below it (the benchmark's baseline). */
export const shippedStorage: PGliteStorage = {
  filesystem: (dir) => new NodeFS(dir),
  startParams: [...PGlite.defaultStartParams],
};

