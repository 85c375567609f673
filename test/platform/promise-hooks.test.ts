import { executionAsyncResource } from 'node:async_hooks';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { tablesDocumentName } from '../../src/model/document-names';
import { testDatabaseUrl } from '../helpers/database';
import { openSse } from '../helpers/sse';
import { acknowledged, synced } from '../helpers/sync';
import { bearerOf, ok, tool, useRunsApp } from '../runs/helpers';
import { createWorkspace, insertKey } from '../workspaces/helpers';

/**
 * The request id and the run travel on the request's actor, not in an
 * AsyncLocalStorage: entering one turns on promise hooks for the whole
 * process, which every await then pays (docs/PERFORMANCE.md, issue 38). Only
 * the embedded database's driver still reads the request from a store, so a
 * Postgres server never turns the hooks on. The server runs in this
 * process, where the hooks show: while they are on, a promise's reaction
 * runs with that promise as its execution resource.
 */

const onPostgres = Boolean(testDatabaseUrl());

function promiseHooksOn(): Promise<boolean> {
  return new Promise((resolve) => setImmediate(() => void Promise.resolve().then(() => resolve(executionAsyncResource() instanceof Promise))));
}

const hooksBeforeStart = promiseHooksOn();
const lines: Array<Record<string, unknown>> = [];
const r = useRunsApp(() => ({ log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) }));

async function workspace(slug: string) {
  const { t, ada } = r;
  const ws = await createWorkspace(t, ada, { name: slug, slug });
  const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'worker' });
  return { ws, base: `/api/workspaces/${slug}`, agent };
}

describe('the request id and the run, carried by the actor', () => {
  it('names the request in the log line of a write that did not commit', async () => {
    const { t, ada } = r;
    const s = await workspace('logged');
    t.services.failpoints.arm('document.commit');
    const failed = await t.request('POST', `${s.base}/rows`, { as: ada.as, body: { data: { title: 'never stored' } } });
    expect(failed.status).toBe(500);
    const requestId = failed.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    await expect.poll(() => lines.filter((line) => line.msg === 'a document change did not commit; no client saw it').map((line) => line.reqId)).toContain(requestId);
  });

  it.skipIf(!onPostgres)('serve REST writes, a run, an MCP tool call, a revert and a sync edit on Postgres with promise hooks off', async () => {
    expect(await hooksBeforeStart).toBe(false);
    const { t, ada } = r;
    const s = await workspace('hooks');
    const created = await ok(r.call('POST', `${s.base}/rows`, ada.as, { data: { title: 'by ada' } }));
    await ok(r.call('PATCH', `${s.base}/rows/${created.id}`, ada.as, { data: { status: 'doing' } }));

    // A run named by Trellis-Run over REST and by the run argument over MCP.
    const { run } = await ok(r.call('POST', `${s.base}/runs`, s.agent.as, { name: 'Some work' }), 201);
    const byRest = await r.call('POST', `${s.base}/rows`, s.agent.as, { data: { title: 'by the run over REST' } }, run.id);
    expect(byRest.status, byRest.text).toBe(200);
    expect(byRest.headers.get('trellis-run')).toBe(run.id);
    const mcp = await r.mcp(bearerOf(s.agent.as));
    const byMcp = await tool(mcp, 'create_row', { slug: 'hooks', data: { title: 'by the run over MCP' }, run: run.id });
    const { changes } = await ok(r.call('GET', `${s.base}/runs/${run.id}/changes`, ada.as));
    expect(changes.map((change: { kind: string; rowId: string }) => [change.kind, change.rowId])).toEqual([
      ['row.created', byRest.body.id],
      ['row.created', byMcp.id],
    ]);

    // A sync edit, then the run's revert, which answers its own run.
    const client = r.connect(tablesDocumentName(s.ws.id), { cookie: ada.cookie });
    await synced(client);
    (client.doc.getMap('rows').get(created.id) as Y.Map<unknown>).set('title', 'by ada, in sync');
    await acknowledged(client);
    const revert = await t.request('POST', `${s.base}/runs/${run.id}/revert`, { as: ada.as });
    expect(revert.status, revert.text).toBe(200);
    expect(revert.headers.get('trellis-run')).toBe(revert.body.revertRun);
    const rows = await ok(r.call('GET', `${s.base}/rows`, ada.as));
    expect(rows.rows.map((row: { data: { title: string } }) => row.data.title)).toEqual(['by ada, in sync']);

    expect(await promiseHooksOn()).toBe(false);
  });

  it.skipIf(onPostgres)('on the embedded database, turn the promise hooks off once every request has answered, with an event stream still open, and serve writes and a sync edit after', async () => {
    const { t, ada } = r;
    const s = await workspace('hooks-embedded');
    const created = await ok(r.call('POST', `${s.base}/rows`, ada.as, { data: { title: 'by ada' } }));
    // Answered: no request open any more (the server counts each until its response closes).
    await expect.poll(() => promiseHooksOn()).toBe(false);

    // An event stream stays open; it does not count as a request in flight.
    const sse = openSse(`${t.url}${s.base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    expect(await sse.ready).toBe(200);
    await ok(r.call('PATCH', `${s.base}/rows/${created.id}`, ada.as, { data: { status: 'doing' } }));
    await expect.poll(() => promiseHooksOn()).toBe(false);

    // A sync edit with the hooks off, then a write with a request open again: each stored and seen.
    const client = r.connect(tablesDocumentName(s.ws.id), { cookie: ada.cookie });
    await synced(client);
    (client.doc.getMap('rows').get(created.id) as Y.Map<unknown>).set('title', 'by ada, in sync');
    await acknowledged(client);
    expect(await promiseHooksOn()).toBe(false);
    const second = await ok(r.call('POST', `${s.base}/rows`, ada.as, { data: { title: 'second' } }));
    const rows = await ok(r.call('GET', `${s.base}/rows`, ada.as));
    expect(rows.rows.map((row: { data: { title: string } }) => row.data.title).sort()).toEqual(['by ada, in sync', 'second']);
    // The stream, open all along, still hears what was written.
    await expect.poll(() => sse.frames.some((frame) => frame.event === 'row.created' && frame.data.data.id === second.id)).toBe(true);
    sse.close();
    await expect.poll(() => promiseHooksOn()).toBe(false);
  });
});
