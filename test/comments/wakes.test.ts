import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock, startTestApp, type Credential } from '../helpers/app';
import { openSse } from '../helpers/sse';
import { eventually } from '../helpers/sync';
import { createWorkspace, elevateForKeys, mint, signInPerson, type Person } from '../keys/fixtures';
import { addComment, expectStatus } from './helpers';

/**
 * Mentioning an agent wakes it: a message in its inbox (list and SSE), once
 * per mention event, deduplicated for 60 s per thread location and agent on
 * the fake clock, never for replies, never failing the comment, and counted
 * on the organisation's messages meter up to the plan's hard ceiling.
 */

// Near a month's end, so the meter's month boundary is minutes away.
const clock = new ManualClock(new Date('2026-11-30T23:30:00Z'));
let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: Person;
let team: { id: string; slug: string };
let rows: string[];
const agents: Record<string, { id: string; as: Credential }> = {};

beforeAll(async () => {
  t = await startTestApp({ clock });
  ada = await signInPerson(t, 'ada@example.com');
  team = await createWorkspace(t, ada, { slug: 'team' });
  await createWorkspace(t, ada, { slug: 'elsewhere' });
  await elevateForKeys(t, ada);
  for (const [name, body] of [
    ['scribe', { role: 'editor' }],
    ['outsider', { role: 'editor', scopeSlug: 'elsewhere' }],
  ] as const) {
    const minted = await mint(t, ada, { agentName: name, ...body });
    agents[name] = { id: minted.key.agent.id, as: minted.as };
  }
  rows = [];
  for (const title of ['one', 'two', 'three']) {
    rows.push((await expectStatus(t.request('POST', '/api/workspaces/team/rows', { as: ada.as, body: { data: { title } } }), 200)).body.id);
  }
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const mentionOf = (name: string) => ({ kind: 'agent', id: agents[name]!.id, label: name });

function mentioning(name: string, rowId: string, extra: Record<string, unknown> = {}) {
  return { target: { type: 'row', rowId }, body: `@${name} please look`, mentions: [mentionOf(name)], ...extra };
}

async function inbox(as: Credential, query = '') {
  return (await expectStatus(t.request('GET', `/api/me/messages${query}`, { as }), 200)).body;
}

describe('mention wake-ups', () => {
  it('a new thread mentioning an agent puts one message in its inbox, counted on the meter', async () => {
    const before = await t.services.limits.messages.usage(ada.orgId);
    const comment = await addComment(t, ada.as, 'team', mentioning('scribe', rows[0]!));
    expect(comment.wakes).toEqual([{ agentId: agents.scribe!.id, status: 'delivered' }]);

    const { messages, nextCursor } = await inbox(agents.scribe!.as);
    expect(nextCursor).toBeNull();
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      kind: 'mention',
      workspace: { id: team.id, slug: 'team', org: { slug: ada.orgSlug } },
      from: { principalType: 'user', id: ada.userId },
      comment: { id: comment.id, body: '@scribe please look', mentions: [mentionOf('scribe')], target: { type: 'row', rowId: rows[0] } },
    });
    expect(messages[0].id).toMatch(/^msg_/);
    expect(messages[0].createdAt).toBe(clock.now().toISOString());
    const after = await t.services.limits.messages.usage(ada.orgId);
    expect(after.delivered).toBe(before.delivered + 1);
    expect(after).toMatchObject({ plan: 'free', period: '2026-11', bundle: 1000, hardCeiling: 1000 });

    // Browser sessions have no inbox; the agent's own key does.
    expect((await t.request('GET', '/api/me/messages', { as: ada.as })).status).toBe(403);
    expect((await t.request('GET', '/api/me/messages')).status).toBe(401);
    expect((await inbox(agents.outsider!.as)).messages).toEqual([]);
  });

  it('wakes once per thread location and agent within 60 s, on the fake clock', async () => {
    const count = async () => (await inbox(agents.scribe!.as)).messages.length;
    const start = await count();
    clock.advance(61_000);
    const first = await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!));
    expect(first.wakes[0].status).toBe('delivered');
    clock.advance(30_000);
    const again = await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!));
    expect(again.wakes[0].status).toBe('deduplicated');
    const elsewhere = await addComment(t, ada.as, 'team', mentioning('scribe', rows[2]!));
    expect(elsewhere.wakes[0].status).toBe('delivered');
    clock.advance(29_000);
    expect((await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!))).wakes[0].status).toBe('deduplicated');
    clock.advance(1_000); // 60 s after the first wake
    expect((await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!))).wakes[0].status).toBe('delivered');
    expect(await count()).toBe(start + 3);
  });

  it('replies, dropped mentions, repeated mentions and the author itself do not wake more than once', async () => {
    clock.advance(61_000);
    const count = async () => (await inbox(agents.scribe!.as)).messages.length;
    const start = await count();
    const root = await addComment(t, ada.as, 'team', { target: { type: 'workspace' }, body: 'A thread' });
    expect(root.wakes).toEqual([]);
    const reply = await addComment(t, ada.as, 'team', { ...mentioning('scribe', rows[0]!), target: { type: 'workspace' }, parentId: root.id });
    expect(reply.mentions).toEqual([mentionOf('scribe')]);
    expect(reply.wakes).toEqual([]);
    const dropped = await addComment(t, ada.as, 'team', { target: { type: 'surface', surfaceSlug: 'table' }, body: 'no at-sign here', mentions: [mentionOf('scribe')] });
    expect(dropped).toMatchObject({ mentions: [], wakes: [] });
    expect(await count()).toBe(start);

    const twice = await addComment(t, ada.as, 'team', {
      target: { type: 'surface', surfaceSlug: 'table' },
      body: '@scribe and again @scribe',
      mentions: [mentionOf('scribe'), mentionOf('scribe')],
    });
    expect(twice.wakes).toEqual([{ agentId: agents.scribe!.id, status: 'delivered' }]);
    expect(await count()).toBe(start + 1);

    // The agent's own comment mentioning itself wakes nobody.
    const own = await addComment(t, agents.scribe!.as, 'team', { ...mentioning('scribe', rows[2]!), target: { type: 'workspace' } });
    expect(own.wakes).toEqual([]);
    expect(await count()).toBe(start + 1);
  });

  it('an agent that cannot read the workspace is not woken, and never sees the comment', async () => {
    const comment = await addComment(t, ada.as, 'team', mentioning('outsider', rows[0]!));
    expect(comment.wakes).toEqual([{ agentId: agents.outsider!.id, status: 'no_access' }]);
    expect((await inbox(agents.outsider!.as)).messages).toEqual([]);
  });

  it('streams new messages over SSE and resumes after Last-Event-ID', async () => {
    clock.advance(61_000);
    const url = `${t.url}/api/me/messages/stream`;
    const auth = { authorization: `Bearer ${(agents.scribe!.as as { bearer: string }).bearer}` };
    const live = openSse(url, auth);
    onTestFinished(() => live.close());
    expect(await live.ready).toBe(200);
    const first = await addComment(t, ada.as, 'team', mentioning('scribe', rows[0]!));
    const second = await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!));
    await eventually(() => live.frames.length === 2);
    expect(live.frames.map((f) => [f.event, f.data.comment.id])).toEqual([
      ['mention', first.id],
      ['mention', second.id],
    ]);
    expect(live.frames[0]!.id).toBe(live.frames[0]!.data.id);

    const resumed = openSse(url, { ...auth, 'last-event-id': live.frames[0]!.id! });
    onTestFinished(() => resumed.close());
    expect(await resumed.ready).toBe(200);
    await eventually(() => resumed.frames.length === 1);
    expect(resumed.frames[0]!.data.comment.id).toBe(second.id);

    expect((await openSse(url, { cookie: `svc-session=${ada.cookie}` }).ready)).toBe(403);
    expect((await openSse(url, { ...auth, 'last-event-id': 'msg_unknown' }).ready)).toBe(404);
  });

  it('a key scoped to another workspace does not see messages from this one', async () => {
    const scoped = await mint(t, ada, { agentName: 'scribe', role: 'viewer', scopeSlug: 'elsewhere' });
    expect(scoped.key.agent.id).toBe(agents.scribe!.id);
    expect((await inbox(agents.scribe!.as)).messages.length).toBeGreaterThan(0);
    expect((await inbox(scoped.as)).messages).toEqual([]);
  });

  it('a failing inbox never fails the comment', async () => {
    clock.advance(61_000);
    const db = t.services.db;
    const { sql } = await import('kysely');
    await sql`alter table inbox_messages rename to inbox_messages_away`.execute(db);
    try {
      const comment = await addComment(t, ada.as, 'team', mentioning('scribe', rows[0]!));
      expect(comment.wakes).toEqual([{ agentId: agents.scribe!.id, status: 'failed' }]);
      expect((await t.request('GET', `/api/comments/${comment.id}`, { as: ada.as })).status).toBe(200);
    } finally {
      await sql`alter table inbox_messages_away rename to inbox_messages`.execute(db);
    }
    // Nothing was claimed or counted for the failed wake: the next one goes through.
    expect((await addComment(t, ada.as, 'team', mentioning('scribe', rows[0]!))).wakes[0].status).toBe('delivered');
  });
});

describe('the messages meter', () => {
  it('stops delivering at the hard ceiling (the comment still succeeds) and starts again with the next UTC month', async () => {
    clock.advance(61_000);
    const usage = await t.services.limits.messages.usage(ada.orgId);
    await t.services.db.updateTable('messageUsage').set({ delivered: usage.hardCeiling }).where('orgId', '=', ada.orgId).where('period', '=', usage.period).execute();
    const inboxBefore = (await inbox(agents.scribe!.as)).messages.length;

    const refused = await addComment(t, ada.as, 'team', mentioning('scribe', rows[2]!));
    expect(refused.wakes).toEqual([{ agentId: agents.scribe!.id, status: 'limit_reached' }]);
    expect((await t.request('GET', `/api/comments/${refused.id}`, { as: ada.as })).status).toBe(200);
    expect((await t.services.limits.messages.usage(ada.orgId)).delivered).toBe(usage.hardCeiling);
    expect((await inbox(agents.scribe!.as)).messages.length).toBe(inboxBefore);

    clock.set(new Date('2026-12-01T00:00:30Z'));
    const next = await addComment(t, ada.as, 'team', mentioning('scribe', rows[2]!));
    expect(next.wakes[0].status).toBe('delivered');
    expect(await t.services.limits.messages.usage(ada.orgId)).toMatchObject({ period: '2026-12', delivered: 1, overage: 0 });
  });

  it('reports the bundle, the ceiling and the overage of the plan', async () => {
    await t.services.db.updateTable('orgs').set({ plan: 'pro' }).where('id', '=', ada.orgId).execute();
    await t.services.db.updateTable('messageUsage').set({ delivered: 25_010 }).where('orgId', '=', ada.orgId).where('period', '=', '2026-12').execute();
    expect(await t.services.limits.messages.usage(ada.orgId)).toMatchObject({
      plan: 'pro',
      period: '2026-12',
      resetAt: new Date('2027-01-01T00:00:00Z'),
      delivered: 25_010,
      bundle: 25_000,
      hardCeiling: 500_000,
      overage: 10,
    });
    clock.advance(61_000);
    expect((await addComment(t, ada.as, 'team', mentioning('scribe', rows[1]!))).wakes[0].status).toBe('delivered');
    expect((await t.services.limits.messages.usage(ada.orgId)).delivered).toBe(25_011);
  });
});
