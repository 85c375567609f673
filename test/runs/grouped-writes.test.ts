import { describe, expect, it, onTestFinished } from 'vitest';
import { openSse } from '../helpers/sse';
import { createWorkspace, insertKey } from '../workspaces/helpers';
import { ok, useRunsApp } from './helpers';

/**
 * Concurrent REST writes to one table share a commit (src/sync/group-commit.ts),
 * and the commit's events ride in the row projection's upsert
 * (src/persistence/table-rows.ts). Each request must still get its own event,
 * under the id the audit log, the live stream and webhooks all give it, its own
 * author and its own run; a request refused for its input changes nothing and
 * does not fail the others.
 */

const r = useRunsApp();

describe('REST writes that share a commit', () => {
  it('each keep their own event id, author and run; a refused one writes nothing and fails no other', async () => {
    const { t, ada } = r;
    const ws = await createWorkspace(t, ada, { name: 'grouped', slug: 'grouped' });
    const base = '/api/workspaces/grouped';
    const night = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'night-shift' });
    const day = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'day-shift' });
    // The first write makes the sheet; the grouped ones below only add rows.
    await ok(r.call('POST', `${base}/rows`, ada.as, { data: { title: 'first' } }));
    const sse = openSse(`${t.url}${base}/subscribe`, { cookie: `svc-session=${ada.cookie}` });
    onTestFinished(() => sse.close());
    expect(await sse.ready).toBe(200);

    const writers = [
      { name: 'night-shift', as: night.as },
      { name: 'day-shift', as: day.as },
      { name: 'ada', as: ada.as },
    ];
    // Each writer's key and workspace looked up once before, so the writes below reach their change together and share commits.
    for (const writer of writers) await ok(r.call('GET', `${base}/rows`, writer.as));
    const writes = Array.from({ length: 12 }, (_, i) => ({ title: `grouped ${i}`, writer: writers[i % 3]! }));
    const refused = { title: 'refused', status: 'nonsense' };
    const answers = await Promise.all([
      ...writes.map((w) => t.request('POST', `${base}/rows`, { as: w.writer.as, body: { data: { title: w.title } } })),
      t.request('POST', `${base}/rows`, { as: night.as, body: { data: refused } }),
    ]);
    const refusal = answers.pop()!;
    expect(refusal.status, refusal.text).toBe(422);
    for (const answer of answers) expect(answer.status, answer.text).toBe(200);
    const created = writes.map((w, i) => ({ ...w, id: answers[i]!.body.id as string, run: answers[i]!.headers.get('trellis-run') }));

    // Nothing of the refused request landed.
    const rows = (await ok(r.call('GET', `${base}/rows?limit=100`, ada.as))).rows as Array<{ id: string; data: { title: string } }>;
    expect(rows.map((row) => row.data.title).sort()).toEqual(['first', ...writes.map((w) => w.title)].sort());

    // One row.created a request, by its own author, under one id on the audit log and on the live stream.
    const audit = (await ok(r.call('GET', `${base}/events?action=row.created&limit=100`, ada.as))).events as Array<{
      eventId: string;
      subjectId?: string;
      data: { id: string; data: { title: string } };
      principal: { name: string };
    }>;
    const logged = new Map(audit.map((event) => [event.data.id, event]));
    await expect.poll(() => sse.frames.filter((f) => f.event === 'row.created').length).toBe(writes.length);
    const streamed = new Map(sse.frames.filter((f) => f.event === 'row.created').map((f) => [f.data.data.id as string, f]));
    for (const write of created) {
      const event = logged.get(write.id);
      expect(event?.data.data.title).toBe(write.title);
      expect(event?.principal.name).toBe(write.writer.name);
      expect(streamed.get(write.id)?.data.eventId).toBe(event?.eventId);
    }
    // A frame's `id:` is the stream's resume cursor: its event's id, or the highest id sent before it when it committed after an event with a higher id (a run.started of a concurrent commit).
    let cursor = 0;
    for (const f of sse.frames) {
      cursor = Math.max(cursor, Number(f.data.eventId));
      expect(f.id).toBe(String(cursor));
    }
    expect(new Set(audit.map((event) => event.eventId)).size).toBe(audit.length);
    expect(audit.filter((event) => event.data.data.title === 'refused')).toEqual([]);

    // Each agent's writes joined its own automatic run, and its run holds exactly them; Ada's joined none.
    for (const writer of writers.slice(0, 2)) {
      const mine = created.filter((w) => w.writer === writer);
      const runs = new Set(mine.map((w) => w.run));
      expect(runs.size).toBe(1);
      const [run] = [...runs];
      expect(run).toMatch(/^run_/);
      const { changes } = await ok(r.call('GET', `${base}/runs/${run}/changes`, ada.as));
      expect(changes.map((c: { kind: string; rowId: string }) => [c.kind, c.rowId]).sort()).toEqual(mine.map((w) => ['row.created', w.id]).sort());
    }
    expect(created.filter((w) => w.writer === writers[2]).every((w) => w.run === null)).toBe(true);
  });
});
