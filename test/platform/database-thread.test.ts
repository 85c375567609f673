import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';
import { startTestApp } from '../helpers/app';
import { signInUser } from '../workspaces/helpers';

/**
 * The embedded database in a thread of its own (EMBEDDED_DATABASE_THREAD,
 * src/persistence/pglite-thread.ts): the same answers as in the serving
 * thread, the database's own refusals included, and what was acknowledged
 * is there after a restart. A failed flush: test/sync/power-loss.test.ts.
 */
const onPostgres = Boolean(testDatabaseUrl());

describe.skipIf(onPostgres)('the embedded database in its own thread', () => {
  let store: Awaited<ReturnType<typeof freshDataStore>>;
  beforeAll(async () => {
    store = await freshDataStore();
  });
  afterAll(async () => {
    await store?.dispose();
  });

  it('answers as in one thread, its refusals included, and keeps what it acknowledged across a restart', async () => {
    const env = { EMBEDDED_DATABASE_THREAD: 'true' };
    const first = await startTestApp({ dataDir: store.dataDir, env });
    let rowIds: string[];
    try {
      const ada = await signInUser(first, 'ada@example.com');
      expect((await first.request('POST', '/api/workspaces', { as: ada.as, body: { name: 'Plans', slug: 'plans', mode: 'table' } })).status).toBe(200);
      // A unique index refuses the second one inside the database thread; its code still reaches the domain as a conflict.
      const again = await first.request('POST', '/api/workspaces', { as: ada.as, body: { name: 'Again', slug: 'plans', mode: 'doc' } });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) => first.request('POST', '/api/workspaces/plans/rows', { as: ada.as, body: { data: { title: `Row ${i}` } } })),
      );
      expect(created.map((res) => res.status)).toEqual(created.map(() => 200));
      rowIds = created.map((res) => res.body.id);
      const listed = await first.request('GET', '/api/workspaces/plans/rows?limit=100', { as: ada.as });
      expect(listed.body.rows.map((row: { id: string }) => row.id).sort()).toEqual([...rowIds].sort());
    } finally {
      await first.close();
    }
    const second = await startTestApp({ dataDir: store.dataDir, env });
    try {
      const ada = await signInUser(second, 'ada@example.com');
      const listed = await second.request('GET', '/api/workspaces/plans/rows?limit=100', { as: ada.as });
      expect(listed.status).toBe(200);
      expect(listed.body.rows.map((row: { data: { title: string } }) => row.data.title).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `Row ${i}`).sort(),
      );
    } finally {
      await second.close();
    }
  }, 120_000);
});
