import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../workspaces/helpers';
import { useVersionsApp } from './helpers';

/**
 * Saved views are not a sheet's content (docs/TABLES.md "Saved views" "Events"):
 * changing them makes no version of the sheet, and restoring a version
 * leaves them as they are.
 */

const v = useVersionsApp();

async function ok(res: Promise<{ status: number; text: string; body: any }>) {
  const answer = await res;
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

describe('saved views and version history', () => {
  it('makes no version for a view change, and a restore keeps the views', async () => {
    const ws = await createWorkspace(v.t, v.ada, { name: 'Viewed', slug: 'viewed' });
    const base = '/api/workspaces/viewed';
    const as = v.ada.as;
    await ok(v.t.request('POST', `${base}/rows`, { as, body: { data: { title: 'One' } } }));
    await v.ageLog(ws.primarySurface.syncDocument, 30);
    const before = (await ok(v.t.request('GET', `${base}/surfaces/table/versions`, { as }))).versions;
    expect(before.length).toBeGreaterThan(0);

    const { view } = await ok(v.t.request('POST', `${base}/views`, { as, body: { name: 'Mine', hiddenColumns: ['notes'] } }));
    await ok(v.t.request('PATCH', `${base}/views/${view.id}`, { as, body: { rowHeight: 'tall' } }));
    const after = (await ok(v.t.request('GET', `${base}/surfaces/table/versions`, { as }))).versions;
    expect(after.map((version: { id: string }) => version.id)).toEqual(before.map((version: { id: string }) => version.id));

    await ok(v.t.request('POST', `${base}/surfaces/table/versions/${before[0].id}/restore`, { as }));
    expect((await ok(v.t.request('GET', `${base}/views`, { as }))).views).toEqual([{ ...view, rowHeight: 'tall' }]);
  });
});
