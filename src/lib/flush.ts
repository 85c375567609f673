import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eachSideBySide } from './side-by-side';

/** Flushes one file (fdatasync: its data and size) or directory (fsync: its entries) to stable storage. */
export async function flushPath(target: string, directory: boolean): Promise<void> {
  const handle = await fs.promises.open(target, 'r');
  try {
    await (directory ? handle.sync() : handle.datasync());
  } finally {
    await handle.close();
  }
}

/**
 * Every file and directory under `root`, then `root`'s own entry in its
 * parent. Where the system has it, one syncfs(2) of the file system holding
 * `root`: a new data directory's 739 files took 150-170 ms of one fdatasync
 * each, one syncfs 36-38 ms with its process (docs/PERFORMANCE.md, issue 38,
 * session 23). Otherwise, or when it fails, file by file, several at a time
 * (the flushes wait on the disk, not on the CPU), each directory after the
 * files in it; a flush that fails there throws.
 */
export async function syncTree(root: string): Promise<void> {
  if (!(await syncFileSystem(root))) await syncEachPath(root);
  await flushPath(path.dirname(root), true);
}

/**
 * syncfs(2) through `sync -f` (coreutils' `--file-system`, BusyBox's too;
 * Node has no binding for it). Linux waits for the writes and the disk's
 * cache flush, and since 5.8 reports a write-back error of the file system.
 * False on any failure, and where there is no such command.
 */
function syncFileSystem(root: string): Promise<boolean> {
  if (process.platform !== 'linux') return Promise.resolve(false);
  return new Promise((resolve) => execFile('sync', ['-f', root], (error) => resolve(error === null)));
}

async function syncEachPath(root: string): Promise<void> {
  const files: string[] = [];
  const directories: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.push(full);
    }
    directories.push(dir);
  };
  walk(root);
  // A file gone since the listing needs no flush (a database running over the directory may remove a temporary file of its own).
  await eachSideBySide(files, (file) =>
    flushPath(file, false).catch((error: { code?: string }) => {
      if (error.code !== 'ENOENT') throw error;
    }),
  );
  await eachSideBySide(directories, (dir) => flushPath(dir, true));
}
