import fs from 'node:fs';

/** Flushes one file (fdatasync: its data and size) or directory (fsync: its entries) to stable storage. */
export async function flushPath(target: string, directory: boolean): Promise<void> {
  const handle = await fs.promises.open(target, 'r');
  try {
    await (directory ? handle.sync() : handle.datasync());
  } finally {
    await handle.close();
  }
}
