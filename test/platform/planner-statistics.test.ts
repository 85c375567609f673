import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlannerStatisticsJob } from '../../src/domain/planner-statistics';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';
import { keepThreadBusy, waitWindows } from '../helpers/busy-thread';

/**
 * PGlite runs no autovacuum: the server analyzes the embedded database's
 * changed tables itself, so the planner sees real row counts (a 100-row
 * page's attribution lookup went from a scan of the workspace's rows to
 * the primary key). On Postgres, autovacuum does it and the job stays off.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
let cookie: string;
const embedded = !process.env.TEST_DATABASE_URL;

beforeAll(async () => {
  t = await startTestApp();
  ({ cookie } = await signIn(t, 'statistics@example.com'));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('planner statistics', () => {
  it(embedded ? 'analyzes the tables whose rows changed, and only those, on the embedded database' : 'leaves statistics to autovacuum on Postgres', async () => {
    const csv = ['title,status', ...Array.from({ length: 300 }, (_, i) => `Row ${i},todo`)].join('\r\n');
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const imported = await fetch(`${t.url}/api/workspaces/welcome/rows/import`, { method: 'POST', headers: { cookie: `svc-session=${cookie}` }, body: form });
    expect(imported.status, await imported.clone().text()).toBe(200);
    expect((await imported.json()).imported).toBe(300);
    await t.services.sync.drain();

    expect(t.app.plannerStatistics.enabled).toBe(embedded);
    const analyzed = await t.app.plannerStatistics.runOnce();
    if (!embedded) {
      expect(analyzed).toEqual([]);
      return;
    }
    expect(analyzed).toContain('table_rows');
    const { rows } = await sql<{ lastAnalyze: Date | null; nModSinceAnalyze: string }>`
      select last_analyze, n_mod_since_analyze from pg_stat_user_tables where relname = 'table_rows'`.execute(t.services.db);
    // Read as the app reads (camel-cased): the column as `last_analyze` was undefined, which is not null either.
    expect(rows[0]!.lastAnalyze).toBeInstanceOf(Date);
    // Nothing changed since: the next pass leaves the table alone.
    expect(await t.app.plannerStatistics.runOnce()).not.toContain('table_rows');
  });

  it(
    embedded
      ? 'a timed pass waits while the serving thread is busy, then analyzes the changed tables; the rows stay as written'
      : 'a timed pass leaves statistics to autovacuum on Postgres; the rows stay as written',
    async () => {
      // The app's own timed pass is stopped: this test's pass is the only one.
      await t.app.plannerStatistics.stop();
      const csv = ['title,status', ...Array.from({ length: 200 }, (_, i) => `Busy ${i},done`)].join('\r\n');
      const form = new FormData();
      form.append('file', new Blob([csv], { type: 'text/csv' }), 'busy.csv');
      const imported = await fetch(`${t.url}/api/workspaces/welcome/rows/import`, { method: 'POST', headers: { cookie: `svc-session=${cookie}` }, body: form });
      expect(imported.status, await imported.clone().text()).toBe(200);
      await t.services.sync.drain();

      const job = new PlannerStatisticsJob(t.services, { intervalMs: 60_000, firstRunAfterMs: 60_000 }, { windowMs: 200, busyShare: 0.2, maxWaitMs: 120_000 });
      // What the backend counted reaches pg_stat_user_tables once flushed (statistics.ts).
      const lastAnalyze = async () => {
        await sql`select pg_stat_force_next_flush()`.execute(t.services.db);
        await sql`select pg_stat_clear_snapshot()`.execute(t.services.db);
        return (await sql<{ lastAnalyze: Date | null }>`select last_analyze from pg_stat_user_tables where relname = 'table_rows'`.execute(t.services.db)).rows[0]?.lastAnalyze ?? null;
      };
      const analyzedBefore = await lastAnalyze();

      // The serving thread busy: every turn runs 20 ms of work.
      const stopBusy = keepThreadBusy();
      let settled = false;
      const pass = job.runWhenQuiet().finally(() => (settled = true));
      // Several quiet windows' worth of busy turns: the pass has not analyzed (nor ended, on the embedded database).
      await waitWindows(10);
      if (embedded) {
        expect(settled).toBe(false);
        expect(await lastAnalyze()).toEqual(analyzedBefore);
      }
      stopBusy();
      const analyzed = await pass;
      if (embedded) {
        expect(analyzed).toContain('table_rows');
        expect(await lastAnalyze()).not.toEqual(analyzedBefore);
      } else {
        expect(analyzed).toEqual([]);
      }
      const rows = await t.request('GET', '/api/workspaces/welcome/rows?limit=1000', { as: { cookie } });
      expect(rows.status, rows.text).toBe(200);
      const titles = (rows.body.rows as Array<{ data: { title: string } }>).map((row) => row.data.title).filter((title) => title.startsWith('Busy '));
      expect(new Set(titles)).toEqual(new Set(Array.from({ length: 200 }, (_, i) => `Busy ${i}`)));
      await job.stop();
    },
  );
});

