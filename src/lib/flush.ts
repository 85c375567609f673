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
 * parent. The files are flushed several at a time (the flushes wait on the
 * disk, not on the CPU: 1,337 files of a new data directory took 0.5 s one
 * after another), each directory after the files in it.
 */
export async function syncTree(root: string): Promise<void> {
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
  await flushPath(path.dirname(root), true);
}
