import { describe, expect, it } from 'vitest';
import { openSse } from '../helpers/sse';
import { acknowledged, synced } from '../helpers/sync';
import { createWorkspace, insertKey } from '../workspaces/helpers';
import { bearerOf, ok, paragraph, tool, useRunsApp } from './helpers';

/**
 * An agent's run over REST, MCP and a Hocuspocus provider while a person
 * edits the same rows, cells and paragraphs (issue 35): what the run
 * changed reads back exactly, its revert removes the agent's work and keeps
 * the person's (their overlapping cells and the row they changed are
 * conflicts), and reverting the revert applies the run again.
 */

const r = useRunsApp();

async function sprint(slug: string) {
  const { t, ada } = r;
  const ws = await createWorkspace(t, ada, { name: slug, slug });
  const base = `/api/workspaces/${slug}`;
  const done = await ok(r.call('POST', `${base}/surfaces`, ada.as, { kind: 'table', slug: 'done', name: 'Done' }));
  const plan = await ok(r.call('POST', `${base}/surfaces`, ada.as, { kind: 'doc', slug: 'plan', name: 'Plan' }));
  await ok(r.call('PUT', `${base}/doc?surface=plan`, ada.as, { markdown: 'Ship the importer.\n\nFix the login bug.\n\nWrite the release notes.\n' }));
  const rows: string[] = [];
  for (const title of ['Importer', 'Login bug', 'Release notes', 'Docs']) rows.push((await ok(r.call('POST', `${base}/rows`, ada.as, { data: { title, status: 'todo' } }))).id);
  const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'triage-bot' });
  return { ws, base, rows, agent, table: ws.primarySurface, done, plan };
}

async function rowsOf(base: string, surface = 'table') {
  const body = await ok(r.call('GET', `${base}/rows?surface=${surface}`, r.ada.as));
  return body.rows.map((row: { id: string; data: Record<string, unknown> }) => ({ id: row.id, ...row.data }));
}

async function markdown(base: string) {
  return (await ok(r.call('GET', `${base}/doc?surface=plan&format=markdown`, r.ada.as))).markdown;
}

describe('an agent run', () => {
  it('records what the agent did over REST, MCP and sync, and its revert keeps what the person did meanwhile', async () => {
    const { t, ada } = r;
    const s = await sprint('sprint');
    const [importer, login, notes, docs] = s.rows as [string, string, string, string];
    const mcp = await r.mcp(bearerOf(s.agent.as));
    const sse = openSse(`${t.url}${s.base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    expect(await sse.ready).toBe(200);

    // The agent starts its run over MCP and works over all three ways in.
    const { run } = await tool(mcp, 'start_run', { slug: 'sprint', name: 'Weekly triage' });
    expect(run).toMatchObject({ name: 'Weekly triage', status: 'open', automatic: false, principal: { name: 'triage-bot' } });
    const created = await t.request('POST', `${s.base}/rows`, { as: s.agent.as, body: { data: { title: 'Agent task', status: 'todo' } }, headers: { 'trellis-run': run.id } });
    expect(created.status, created.text).toBe(200);
    expect(created.headers.get('trellis-run')).toBe(run.id);
    const agentTask = created.body.id as string;
    await ok(r.call('PATCH', `${s.base}/rows/${importer}`, s.agent.as, { data: { status: 'doing', notes: 'agent note' } }, run.id));
    await tool(mcp, 'update_row', { slug: 'sprint', id: login, data: { title: 'Login bug (agent)' }, run: run.id });
    await tool(mcp, 'delete_row', { slug: 'sprint', id: docs, run: run.id });
    await tool(mcp, 'move_rows', { slug: 'sprint', rowIds: [notes], surface: 'done', run: run.id });
    await ok(r.call('POST', `${s.base}/columns`, s.agent.as, { column: { key: 'estimate', label: 'Estimate', type: 'number' } }, run.id));
    await tool(mcp, 'bulk_update_rows', { slug: 'sprint', updates: [{ id: importer, data: { estimate: 3 } }, { id: login, data: { estimate: 8 } }], run: run.id });
    const agentDoc = r.connect(s.plan.syncDocument, { token: bearerOf(s.agent.as) }, run.id);
    await synced(agentDoc);
    paragraph(agentDoc.doc, 0).insert('Ship the importer'.length, ' this week');
    paragraph(agentDoc.doc, 1).delete('Fix the '.length, 'login '.length);
    await acknowledged(agentDoc);

    // Meanwhile Ada edits the same rows, a cell the agent set, the row it made and both paragraphs.
    await ok(r.call('PATCH', `${s.base}/rows/${importer}`, ada.as, { data: { notes: 'ada note' } }));
    await ok(r.call('PATCH', `${s.base}/rows/${login}`, ada.as, { data: { status: 'done' } }));
    await ok(r.call('PATCH', `${s.base}/rows/${agentTask}`, ada.as, { data: { title: 'Agent task, checked by Ada' } }));
    const adaDoc = r.connect(s.plan.syncDocument, { cookie: ada.cookie });
    await synced(adaDoc);
    paragraph(adaDoc.doc, 0).insert(0, 'Ada: ');
    const second = paragraph(adaDoc.doc, 1);
    second.insert(second.length, ' Today.');
    await acknowledged(adaDoc);

    expect(await markdown(s.base)).toBe('Ada: Ship the importer this week.\n\nFix the bug. Today.\n\nWrite the release notes.\n');

    // What the run changed, exactly: per surface in the order it first changed each; Ada's edits are not in it.
    const { changes } = await ok(r.call('GET', `${s.base}/runs/${run.id}/changes`, ada.as));
    expect(changes).toEqual([
      { surface: 'table', surfaceId: s.table.id, kind: 'column.created', column: expect.objectContaining({ key: 'estimate', label: 'Estimate', type: 'number' }) },
      { surface: 'table', surfaceId: s.table.id, kind: 'row.created', rowId: agentTask, data: { title: 'Agent task', status: 'todo' } },
      {
        surface: 'table',
        surfaceId: s.table.id,
        kind: 'row.updated',
        rowId: importer,
        cells: { status: { before: 'todo', after: 'doing' }, notes: { before: null, after: 'agent note' }, estimate: { before: null, after: 3 } },
      },
      { surface: 'table', surfaceId: s.table.id, kind: 'row.updated', rowId: login, cells: { title: { before: 'Login bug', after: 'Login bug (agent)' }, estimate: { before: null, after: 8 } } },
      { surface: 'table', surfaceId: s.table.id, kind: 'row.deleted', rowId: docs, data: { title: 'Docs', status: 'todo' } },
      { surface: 'done', surfaceId: s.done.id, kind: 'row.moved', rowId: notes, fromSurface: 'table', position: 0 },
      { surface: 'plan', surfaceId: s.plan.id, kind: 'doc.changed', inserted: [' this week'], deleted: ['login '] },
    ]);
    const { run: shown } = await ok(r.call('GET', `${s.base}/runs/${run.id}`, ada.as));
    expect(shown.summary).toEqual({ rowsCreated: 1, rowsUpdated: 3, rowsDeleted: 1, cellsChanged: 5, columnsChanged: 1, docsChanged: 1, surfaces: ['table', 'done', 'plan'] });

    // The preview writes nothing and answers what the revert will.
    const conflicts = [
      { surface: 'table', rowId: agentTask, before: null, run: { title: 'Agent task', status: 'todo' }, now: { title: 'Agent task, checked by Ada', status: 'todo' } },
      { surface: 'table', rowId: importer, column: 'notes', before: null, run: 'agent note', now: 'ada note' },
    ];
    const reverted = { rowsRemoved: 0, rowsRestored: 1, rowsMoved: 1, cellsRestored: 4, columnsRestored: 1, docsChanged: 1, filesRestored: 0, commentsRemoved: 0 };
    const preview = await ok(r.call('POST', `${s.base}/runs/${run.id}/revert?dryRun=true`, ada.as));
    expect(preview).toEqual({ reverted, conflicts, revertRun: null });
    expect(await markdown(s.base)).toBe('Ada: Ship the importer this week.\n\nFix the bug. Today.\n\nWrite the release notes.\n');

    // The revert: the agent's work goes, Ada's stays, her overlapping cell and the row she changed are conflicts.
    const answer = await t.request('POST', `${s.base}/runs/${run.id}/revert`, { as: ada.as });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ reverted, conflicts, revertRun: expect.stringMatching(/^run_/) });
    expect(answer.headers.get('trellis-run')).toBe(answer.body.revertRun);
    expect(await rowsOf(s.base)).toEqual([
      { id: importer, title: 'Importer', status: 'todo', notes: 'ada note' },
      { id: login, title: 'Login bug', status: 'done' },
      { id: notes, title: 'Release notes', status: 'todo' },
      { id: docs, title: 'Docs', status: 'todo' },
      { id: agentTask, title: 'Agent task, checked by Ada', status: 'todo' },
    ]);
    expect(await rowsOf(s.base, 'done')).toEqual([]);
    expect((await ok(r.call('GET', `${s.base}/columns`, ada.as))).columns.map((c: { key: string }) => c.key)).toEqual(['title', 'status', 'notes']);
    expect(await markdown(s.base)).toBe('Ada: Ship the importer.\n\nFix the login bug. Today.\n\nWrite the release notes.\n');
    // Connected clients hold the same.
    await expect.poll(() => paragraph(agentDoc.doc, 1).toString()).toBe('Fix the login bug. Today.');

    // The revert is Ada's run, listed with what it changed; the run knows it was reverted; the events are in the audit log.
    const { runs } = await ok(r.call('GET', `${s.base}/runs`, ada.as));
    expect(runs.map((x: { name: string; status: string; reverts: string | null; revertedBy: string | null }) => [x.name, x.status, x.reverts, x.revertedBy])).toEqual([
      ['Revert of Weekly triage', 'ended', run.id, null],
      ['Weekly triage', 'open', null, answer.body.revertRun],
    ]);
    expect(runs[0].principal.name).toBe('ada');
    const events = await ok(r.call('GET', `${s.base}/events?limit=100`, ada.as));
    const runEvents = events.events.filter((e: { event: string }) => e.event.startsWith('run.')).map((e: { event: string; principal: { name: string }; data: { runId: string } }) => [e.event, e.principal.name, e.data.runId]);
    expect(runEvents).toEqual([
      ['run.reverted', 'ada', run.id],
      ['run.ended', 'ada', answer.body.revertRun],
      ['run.started', 'ada', answer.body.revertRun],
      ['run.started', 'triage-bot', run.id],
    ]);

    // The same run events reach the live stream (and webhooks: one event record serves all three).
    await expect.poll(() => sse.frames.filter((f) => f.event?.startsWith('run.')).map((f) => f.event)).toEqual(['run.started', 'run.started', 'run.ended', 'run.reverted']);
    sse.close();

    // Reverting the revert applies the run again (where nobody changed anything since, nothing conflicts).
    const again = await ok(r.call('POST', `${s.base}/runs/${answer.body.revertRun}/revert`, ada.as));
    expect(again.conflicts).toEqual([]);
    expect(again.reverted).toMatchObject({ rowsRemoved: 1, rowsMoved: 1, cellsRestored: 4, columnsRestored: 1, docsChanged: 1 });
    expect(await rowsOf(s.base)).toEqual([
      { id: importer, title: 'Importer', status: 'doing', notes: 'ada note', estimate: 3 },
      { id: login, title: 'Login bug (agent)', status: 'done', estimate: 8 },
      { id: agentTask, title: 'Agent task, checked by Ada', status: 'todo' },
    ]);
    expect(await rowsOf(s.base, 'done')).toEqual([{ id: notes, title: 'Release notes', status: 'todo' }]);
    expect((await ok(r.call('GET', `${s.base}/columns`, ada.as))).columns.map((c: { key: string }) => c.key)).toEqual(['title', 'status', 'notes', 'estimate']);
    expect(await markdown(s.base)).toBe('Ada: Ship the importer this week.\n\nFix the bug. Today.\n\nWrite the release notes.\n');
  });
});
