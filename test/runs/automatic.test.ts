import { describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { ManualClock } from '../helpers/app';
import { acknowledged, synced } from '../helpers/sync';
import { createWorkspace, insertKey } from '../workspaces/helpers';
import { bearerOf, ok, useRunsApp } from './helpers';

/**
 * Automatic runs (issue 35): an API key that names no run writes into the
 * automatic run of that key in that workspace, over REST, MCP and sync
 * alike, and every write answer names it; after 15 minutes without writes
 * (a clock the test moves) the next write opens a new one and the old one
 * reads as ended. A person's writes join no run unless they name one.
 */

const clock = new ManualClock(new Date('2026-11-02T09:00:00Z'));
const r = useRunsApp(() => ({ clock }));

const MINUTE = 60_000;

/** A raw MCP tools/call, to read the answer's headers. */
async function mcpCall(bearer: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${r.t.url}/api/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await res.json();
  expect(body.result?.isError, JSON.stringify(body)).toBeFalsy();
  return { run: res.headers.get('trellis-run'), result: body.result.structuredContent };
}

describe('automatic runs', () => {
  it('collect a key’s writes over REST, MCP and sync, and split after 15 idle minutes', async () => {
    const { t, ada } = r;
    const ws = await createWorkspace(t, ada, { name: 'auto', slug: 'auto' });
    const base = '/api/workspaces/auto';
    const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'night-shift' });

    const first = await t.request('POST', `${base}/rows`, { as: agent.as, body: { data: { title: 'one' } } });
    expect(first.status, first.text).toBe(200);
    const automatic = first.headers.get('trellis-run');
    expect(automatic).toMatch(/^run_/);
    clock.advance(10 * MINUTE);
    const second = await t.request('PATCH', `${base}/rows/${first.body.id}`, { as: agent.as, body: { data: { status: 'doing' } } });
    expect(second.headers.get('trellis-run')).toBe(automatic);
    clock.advance(10 * MINUTE);
    const viaMcp = await mcpCall(bearerOf(agent.as), 'create_row', { slug: 'auto', data: { title: 'two' } });
    expect(viaMcp.run).toBe(automatic);
    clock.advance(10 * MINUTE);
    // A sync client of the key, naming no run: its update joins the same automatic run.
    const client = r.connect(tablesDocumentName(ws.id), { token: bearerOf(agent.as) });
    await synced(client);
    client.doc.transact(() => insertRow(client.doc, { id: 'typed-row', surfaceId: ws.primarySurface.id, data: { title: 'three' } }, null));
    await acknowledged(client);
    // Reads join nothing; a person's write joins nothing either.
    expect((await t.request('GET', `${base}/rows`, { as: agent.as })).headers.get('trellis-run')).toBeNull();
    const mine = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'by a person' } } });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('trellis-run')).toBeNull();

    const { changes } = await ok(r.call('GET', `${base}/runs/${automatic}/changes`, ada.as));
    expect(changes.map((c: { kind: string; data?: { title: string } }) => [c.kind, c.data?.title ?? null])).toEqual([
      ['row.created', 'one'],
      ['row.created', 'two'],
      ['row.created', 'three'],
    ]);
    const lastWrite = clock.now();

    // 15 minutes without writes: the next write opens a new automatic run.
    clock.advance(15 * MINUTE + 1);
    const later = await t.request('POST', `${base}/rows`, { as: agent.as, body: { data: { title: 'next morning' } } });
    const next = later.headers.get('trellis-run');
    expect(next).toMatch(/^run_/);
    expect(next).not.toBe(automatic);
    const { runs } = await ok(r.call('GET', `${base}/runs`, ada.as));
    expect(runs.map((run: { id: string; automatic: boolean; status: string; principal: { name: string } }) => [run.id, run.automatic, run.status, run.principal.name])).toEqual([
      [next, true, 'open', 'night-shift'],
      [automatic, true, 'ended', 'night-shift'],
    ]);
    expect(runs[1].endedAt).toBe(new Date(lastWrite.getTime() + 15 * MINUTE).toISOString());
    expect(runs[1].summary).toMatchObject({ rowsCreated: 3, surfaces: ['table'] });
    // An ended automatic run takes no more writes.
    const late = await t.request('POST', `${base}/rows`, { as: agent.as, body: { data: { title: 'too late' } }, headers: { 'trellis-run': automatic! } });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('run_ended');

    // Idle runs end on their own (the sweep), with run.ended.
    clock.advance(16 * MINUTE);
    await t.services.runs.endIdleNow();
    expect((await ok(r.call('GET', `${base}/runs/${next}`, ada.as))).run.status).toBe('ended');
    const events = await ok(r.call('GET', `${base}/events?action=run.ended`, ada.as));
    expect(events.events.map((e: { data: { runId: string } }) => e.data.runId).sort()).toEqual([automatic, next].sort());
  });
});
