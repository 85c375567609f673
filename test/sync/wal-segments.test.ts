import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableNodeFS, durableStorage, type EmscriptenModule, type EmscriptenNode } from '../../src/persistence/durable-fs';
import { createPGlite } from '../../src/persistence/pglite-instance';
import { nextSegmentName } from '../../src/persistence/wal-preallocation';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The embedded database's WAL segments are made ahead of time, off the
 * serving thread (src/persistence/wal-preallocation.ts): Postgres, which
 * PGlite runs without a checkpointer, would otherwise write each new 16 MB
 * segment full of zeros inside the statement that crossed into it, a turn
 * of 66-115 ms of the serving thread's CPU under the typing trace.
 * Postgres has its WAL natively; this is the embedded database's file layer.
 */
const onPostgres = Boolean(testDatabaseUrl());

/** The durable file layer, noting each WAL segment Postgres made itself (its `xlogtemp.<pid>` file, filled and renamed into place). */
class WatchedFS extends DurableNodeFS {
  madeByPostgres: string[] = [];
  protected override patch(mod: EmscriptenModule): void {
    super.patch(mod);
    const nodeOps = mod.NODEFS.node_ops;
    const mknod = nodeOps.mknod!;
    nodeOps.mknod = (parent: EmscriptenNode, name: string, ...rest: unknown[]) => {
      if (name.startsWith('xlogtemp.') && !name.startsWith('xlogtemp.trellis')) this.madeByPostgres.push(name);
      return mknod(parent, name, ...rest);
    };
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

const segmentsIn = async (dir: string) => (await fs.readdir(path.join(dir, 'pg_wal'))).filter((name) => /^[0-9A-F]{24}$/.test(name)).sort();

describe.skipIf(onPostgres)('WAL segments of the embedded database', () => {
  it('are made ahead of time, not inside a statement, and what was written across them reads back whole after a restart', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-wal-'));
    dirs.push(dir);
    const watched = new WatchedFS(dir);
    const storage = { ...durableStorage, filesystem: () => watched };
    let pg = await createPGlite(dir, undefined, storage);
    await pg.exec('create table blobs (id int primary key, bytes bytea not null)');
    const before = await segmentsIn(dir);
    // Incompressible rows, ~60 MB of WAL: across three segment boundaries at least. The server's event loop turns between
    // its statements; so does this loop, now and then, which is when the preallocation's file calls are answered.
    const digest = createHash('sha256');
    const rows = 900;
    for (let id = 0; id < rows; id++) {
      const bytes = randomBytes(64 * 1024);
      digest.update(bytes);
      await pg.query('insert into blobs (id, bytes) values ($1, $2)', [id, bytes]);
      if (id % 10 === 0) await nextTurn();
      // A segment made ahead of time needs a moment of the disk: the test waits for it as a slow typist would give it.
      if (id % 50 === 0) await watched.walSegments.settled();
    }
    const after = await segmentsIn(dir);
    const crossed = after.filter((name) => !before.includes(name)).length;
    expect(crossed).toBeGreaterThanOrEqual(3);
    // Postgres made at most the first new segment itself (before the first preallocation had its turn), none after.
    expect(watched.madeByPostgres.length).toBeLessThanOrEqual(1);
    expect(watched.walSegments.made).toBeGreaterThanOrEqual(crossed - 1);
    // No temporary file of ours is left behind.
    expect((await fs.readdir(path.join(dir, 'pg_wal'))).filter((name) => name.startsWith('xlogtemp.trellis'))).toEqual([]);

    await pg.close();
    // Closed means still: nothing of ours is being written into the directory any more.
    expect((await fs.readdir(path.join(dir, 'pg_wal'))).filter((name) => name.startsWith('xlogtemp.'))).toEqual([]);
    pg = await createPGlite(dir, undefined);
    const read = await pg.query<{ bytes: Uint8Array }>('select bytes from blobs order by id');
    expect(read.rows).toHaveLength(rows);
    const again = createHash('sha256');
    for (const row of read.rows) again.update(row.bytes);
    expect(again.digest('hex')).toBe(digest.digest('hex'));
    await pg.close();
  }, 180_000);

  it("makes the successor of the segment it opened with only after a start's time, not during the open; closed before then, it makes none and leaves nothing behind", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-wal-start-'));
    dirs.push(dir);
    // A wait far longer than any open: what the open itself made shows, whatever the machine's load.
    const watched = new WatchedFS(dir, undefined, 600_000);
    const pg = await createPGlite(dir, undefined, { ...durableStorage, filesystem: () => watched });
    const opened = await segmentsIn(dir);
    await pg.query('select 1');
    expect(watched.walSegments.made).toBe(0);
    // Closing does not wait out the 10 minutes (the test's own timeout is 60 s), and makes nothing meanwhile.
    await pg.close();
    expect(watched.walSegments.made).toBe(0);
    expect(await segmentsIn(dir)).toEqual(opened);
    expect((await fs.readdir(path.join(dir, 'pg_wal'))).filter((name) => name.startsWith('xlogtemp.'))).toEqual([]);

    // Reopened with a short wait: once it is over, the successor is there, made here rather than by Postgres.
    const again = new WatchedFS(dir, undefined, 200);
    const reopened = await createPGlite(dir, undefined, { ...durableStorage, filesystem: () => again });
    await again.walSegments.settled();
    expect(again.walSegments.made).toBe(1);
    const current = opened.at(-1)!;
    expect(await segmentsIn(dir)).toContain(nextSegmentName(current, 256));
    expect(again.madeByPostgres).toEqual([]);
    await reopened.close();
  }, 60_000);

  it('names the segment after a given one as Postgres does', () => {
    expect(nextSegmentName('000000010000000000000001', 256)).toBe('000000010000000000000002');
    expect(nextSegmentName('0000000100000000000000FF', 256)).toBe('000000010000000100000000');
    expect(nextSegmentName('00000002000000A30000003F', 64)).toBe('00000002000000A400000000');
  });
});
