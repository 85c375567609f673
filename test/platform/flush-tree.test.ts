import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { syncTree } from '../../src/lib/flush';

/**
 * A new data directory is flushed before the server stands on it
 * (src/lib/flush.ts `syncTree`, used for the template's copy and a new
 * database's files): with one syncfs(2) through `sync -f` where the
 * system has it, file by file where it has not or it fails.
 */
const onLinux = process.platform === 'linux';
const scratch: string[] = [];
const originalPath = process.env.PATH;

afterEach(async () => {
  process.env.PATH = originalPath;
  for (const dir of scratch.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function tree(): Promise<string> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-flush-'));
  scratch.push(base);
  const root = path.join(base, 'pglite');
  await fs.mkdir(path.join(root, 'base', '5'), { recursive: true });
  await fs.writeFile(path.join(root, 'PG_VERSION'), '17\n');
  for (let i = 0; i < 20; i++) await fs.writeFile(path.join(root, 'base', '5', String(1000 + i)), Buffer.alloc(8192, i));
  return root;
}

/** A `sync` first on PATH that notes its arguments, then runs the system's or fails. */
async function syncCommand(behaviour: 'system' | 'fail'): Promise<string> {
  const bin = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-sync-bin-'));
  scratch.push(bin);
  const calls = path.join(bin, 'calls');
  const system = (originalPath ?? '').split(':').map((dir) => path.join(dir, 'sync'));
  const found = (await Promise.all(system.map((file) => fs.access(file).then(() => file, () => null)))).find(Boolean);
  const run = behaviour === 'system' ? `exec ${found} "$@"` : 'exit 1';
  await fs.writeFile(path.join(bin, 'sync'), `#!/bin/sh\necho "$@" >> ${calls}\n${run}\n`, { mode: 0o755 });
  process.env.PATH = `${bin}:${originalPath}`;
  return calls;
}

describe.runIf(onLinux)('a new data directory flushed (syncTree)', () => {
  it('goes through one syncfs of its file system, and is whole afterwards', async () => {
    const root = await tree();
    const calls = await syncCommand('system');
    await syncTree(root);
    expect((await fs.readFile(calls, 'utf8')).trim().split('\n')).toEqual([`-f ${root}`]);
    expect((await fs.readdir(path.join(root, 'base', '5'))).length).toBe(20);
    expect(await fs.readFile(path.join(root, 'base', '5', '1007'))).toEqual(Buffer.alloc(8192, 7));
  });

  it('falls back to flushing file by file when that command fails or is missing, and still succeeds', async () => {
    const root = await tree();
    const calls = await syncCommand('fail');
    await expect(syncTree(root)).resolves.toBeUndefined();
    expect(await fs.readFile(calls, 'utf8')).toBe(`-f ${root}\n`);

    process.env.PATH = path.join(root, 'no-such-dir');
    await expect(syncTree(root)).resolves.toBeUndefined();
  });
});
