import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

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
    const { rows } = await sql<{ last_analyze: Date | null; n_mod_since_analyze: string }>`
      select last_analyze, n_mod_since_analyze from pg_stat_user_tables where relname = 'table_rows'`.execute(t.services.db);
    expect(rows[0]!.last_analyze).not.toBeNull();
    // Nothing changed since: the next pass leaves the table alone.
    expect(await t.app.plannerStatistics.runOnce()).not.toContain('table_rows');
  });
});
