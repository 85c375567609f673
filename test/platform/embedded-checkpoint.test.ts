import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedCheckpointJob } from '../../src/domain/embedded-checkpoint';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { keepThreadBusy, waitWindows } from '../helpers/busy-thread';

/**
 * PGlite runs Postgres as a single-user backend, which never checkpoints by
 * itself: without the server's own checkpoints the embedded database's WAL
 * grew until a restart, and a crash replayed all of it. On Postgres its
 * checkpointer does it and the job stays off.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let cookie: string;
const embedded = !process.env.TEST_DATABASE_URL;
const BOUND = 128 * 1024;

beforeAll(async () => {
  t = await startTestApp();
  ({ cookie } = await signIn(t, 'checkpoint@example.com'));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

async function importRows(prefix: string, count: number) {
  const csv = ['title,status', ...Array.from({ length: count }, (_, i) => `${prefix} ${i},todo`)].join('\r\n');
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
  const imported = await fetch(`${t.url}/api/workspaces/welcome/rows/import`, { method: 'POST', headers: { cookie: `svc-session=${cookie}` }, body: form });
  expect(imported.status, await imported.clone().text()).toBe(200);
  await t.services.sync.drain();
}

async function titlesStartingWith(prefix: string) {
  const rows = await t.request('GET', '/api/workspaces/welcome/rows?limit=1000', { as: { cookie } });
  expect(rows.status, rows.text).toBe(200);
  return new Set((rows.body.rows as Array<{ data: { title: string } }>).map((row) => row.data.title).filter((title) => title.startsWith(prefix)));
}

const checkpointState = async () =>
  (
    await sql<{ checkpointLsn: string; walSince: string | number }>`
      select checkpoint_lsn::text, (pg_current_wal_lsn() - redo_lsn)::int8 as wal_since from pg_control_checkpoint()`.execute(t.services.db)
  ).rows[0]!;

describe('checkpoints of the embedded database', () => {
  it(
    embedded
      ? 'checkpoints once the WAL since the last checkpoint passes its bound, and not before; the rows stay as written'
      : 'leaves checkpoints to Postgres',
    async () => {
      expect(t.app.embeddedCheckpoints.enabled).toBe(embedded);
      const job = new EmbeddedCheckpointJob(t.services, { intervalMs: 60_000, firstRunAfterMs: 60_000 }, BOUND);
      if (!embedded) {
        await importRows('Pg', 50);
        expect(await job.runOnce()).toBe(false);
        return;
      }
      // A first pass brings the WAL under the bound, whatever the start left.
      await job.runOnce();
      const before = await checkpointState();
      expect(Number(before.walSince)).toBeLessThan(BOUND);
      expect(await job.runOnce()).toBe(false);
      expect((await checkpointState()).checkpointLsn).toBe(before.checkpointLsn);

      await importRows('Kept', 200);
      const written = await checkpointState();
      expect(Number(written.walSince)).toBeGreaterThanOrEqual(BOUND);
      expect(written.checkpointLsn).toBe(before.checkpointLsn);

      expect(await job.runOnce()).toBe(true);
      const after = await checkpointState();
      expect(after.checkpointLsn).not.toBe(before.checkpointLsn);
      expect(Number(after.walSince)).toBeLessThan(BOUND);
      expect(await titlesStartingWith('Kept ')).toEqual(new Set(Array.from({ length: 200 }, (_, i) => `Kept ${i}`)));
      await job.stop();
    },
  );

  it.skipIf(!embedded)('a timed pass waits while the serving thread is busy, then checkpoints', async () => {
    const job = new EmbeddedCheckpointJob(t.services, { intervalMs: 60_000, firstRunAfterMs: 60_000 }, BOUND, { windowMs: 200, busyShare: 0.2, maxWaitMs: 120_000 });
    await importRows('Busy', 200);
    const before = await checkpointState();
    expect(Number(before.walSince)).toBeGreaterThanOrEqual(BOUND);

    // The serving thread busy: every turn runs 20 ms of work.
    const stopBusy = keepThreadBusy();
    let settled = false;
    const pass = job.runWhenQuiet().finally(() => (settled = true));
    await waitWindows(10);
    expect(settled).toBe(false);
    expect((await checkpointState()).checkpointLsn).toBe(before.checkpointLsn);
    stopBusy();
    expect(await pass).toBe(true);
    expect((await checkpointState()).checkpointLsn).not.toBe(before.checkpointLsn);
    expect(await titlesStartingWith('Busy ')).toEqual(new Set(Array.from({ length: 200 }, (_, i) => `Busy ${i}`)));
    await job.stop();
  });
});
