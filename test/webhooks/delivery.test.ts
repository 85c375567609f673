import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually as eventuallyWithin } from '../helpers/sync';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { Receiver } from './receiver';

/**
 * Delivery to a real receiver on loopback: Standard Webhooks signatures
 * that the library's own verifier accepts, the event filter, the
 * workspace-scoped form, pausing and resuming, and order.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await t?.store.dispose();
});

async function subscribe(user: TestUser, path: string, events: string[], base = `/api/orgs/${user.orgSlug}`) {
  const res = await t.request('POST', `${base}/webhooks`, { as: user.as, body: { url: `${receiver.url}${path}`, events } });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; secret: string; url: string; events: string[] };
}

async function addRow(user: TestUser, workspace: string, title: string) {
  const res = await t.request('POST', `/api/orgs/${user.orgSlug}/workspaces/${workspace}/rows`, { as: user.as, body: { data: { title } } });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string };
}

/** Generous: a loaded machine runs many suites at once. */
const eventually = <T>(check: () => T | Promise<T>) => eventuallyWithin(check, 20_000);

const at = (path: string) => receiver.received.filter((r) => r.path === path);

// Many round trips through a real server: generous on a loaded machine (assertions wait for conditions).
describe('webhook delivery', { timeout: 240_000 }, () => {
  it('signs each delivery so that the standardwebhooks verifier accepts it, and the body is the event record', async () => {
    const user = await signInUser(t, 'signed@example.com');
    const hook = await subscribe(user, '/signed', ['row.created']);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const row = await addRow(user, 'welcome', 'signed row');
    const [delivery] = await eventually(() => (at('/signed').length >= 1 ? at('/signed') : null));

    const verified = new Webhook(hook.secret).verify(delivery!.body, delivery!.headers) as any;
    expect(verified.event).toBe('row.created');
    expect(verified.data.id).toBe(row.id);
    expect(verified.data.data.title).toBe('signed row');
    expect(verified.workspace.slug).toBe('welcome');
    expect(verified.workspace.org.slug).toBe(user.orgSlug);
    expect(verified.principal.id).toBe(user.userId);
    expect(Object.keys(verified)).toEqual(['eventId', 'event', 'ts', 'workspace', 'surface', 'principal', 'data']);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(Number(delivery!.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);

    // A tampered body or another secret does not verify.
    expect(() => new Webhook(hook.secret).verify(delivery!.body.replace('signed row', 'forged row'), delivery!.headers)).toThrow();
    expect(() => new Webhook('whsec_' + Buffer.from('another secret of 24 byte').toString('base64')).verify(delivery!.body, delivery!.headers)).toThrow();

    // The event is the audit log's record, and the webhook-id is the delivery's id.
    const audit = await t.request('GET', `/api/workspaces/welcome/events?action=row.created&limit=1`, { as: user.as });
    expect(audit.body.events[0]).toEqual(verified);
    const listed = await eventually(async () => {
      const res = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}/deliveries`, { as: user.as });
      return res.body.deliveries[0]?.status === 'succeeded' ? res.body : null;
    });
    expect(listed.deliveries[0]).toMatchObject({
      id: delivery!.headers['webhook-id'],
      webhookId: hook.id,
      eventId: verified.eventId,
      event: 'row.created',
      status: 'succeeded',
      attempts: 1,
      responseStatus: 200,
      error: null,
      nextAttemptAt: null,
    });
    expect(listed.deliveries[0].durationMs).toBeGreaterThanOrEqual(0);
  });

  it('sends only the events a subscription names, in the order they happened', async () => {
    const user = await signInUser(t, 'filter@example.com');
    await subscribe(user, '/created', ['row.created']);
    await subscribe(user, '/rows', ['row.*']);
    const first = await addRow(user, 'welcome', 'one');
    const patched = await t.request('PATCH', `/api/workspaces/welcome/rows/${first.id}`, { as: user.as, body: { data: { title: 'one, edited' } } });
    expect(patched.status).toBe(200);
    const second = await addRow(user, 'welcome', 'two');

    // `row.*` gets all three, in order; the second create arriving last proves the update was not skipped by chance.
    const rows = await eventually(() => (at('/rows').length >= 3 ? at('/rows') : null));
    expect(rows.map((r) => [r.json.event, r.json.data.id])).toEqual([
      ['row.created', first.id],
      ['row.updated', first.id],
      ['row.created', second.id],
    ]);
    // `row.created` got both creates and, by the time the later one arrived, no update.
    const created = await eventually(() => (at('/created').length >= 2 ? at('/created') : null));
    expect(created.map((r) => [r.json.event, r.json.data.id])).toEqual([
      ['row.created', first.id],
      ['row.created', second.id],
    ]);
    const ids = rows.map((r) => Number(r.json.eventId));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  it('the workspace form receives only its workspace events, at both workspace addresses', async () => {
    const user = await signInUser(t, 'scoped@example.com');
    await createWorkspace(t, user, { name: 'Alpha', slug: 'alpha' });
    await createWorkspace(t, user, { name: 'Beta', slug: 'beta' });
    const scoped = await subscribe(user, '/alpha', ['row.created'], '/api/workspaces/alpha');
    const canonical = await t.request('GET', `/api/orgs/${user.orgSlug}/workspaces/alpha/webhooks`, { as: user.as });
    expect(canonical.status).toBe(200);
    expect(canonical.body.webhooks.map((w: any) => w.id)).toEqual([scoped.id]);
    expect(canonical.body.webhooks[0].workspace.slug).toBe('alpha');
    // Not an org-wide webhook, and not beta's.
    expect((await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks`, { as: user.as })).body.webhooks).toEqual([]);
    expect((await t.request('GET', '/api/workspaces/beta/webhooks', { as: user.as })).body.webhooks).toEqual([]);
    expect((await t.request('GET', `/api/workspaces/beta/webhooks/${scoped.id}`, { as: user.as })).status).toBe(404);

    await addRow(user, 'beta', 'in beta');
    const inAlpha = await addRow(user, 'alpha', 'in alpha');
    await addRow(user, 'beta', 'in beta again');
    const inAlphaAgain = await addRow(user, 'alpha', 'in alpha again');
    const got = await eventually(() => (at('/alpha').length >= 2 ? at('/alpha') : null));
    expect(got.map((r) => r.json.data.id)).toEqual([inAlpha.id, inAlphaAgain.id]);
    expect(got.every((r) => r.json.workspace.slug === 'alpha')).toBe(true);

    const deliveries = await t.request('GET', `/api/workspaces/alpha/webhooks/${scoped.id}/deliveries`, { as: user.as });
    expect(deliveries.body.deliveries.map((d: any) => d.eventId)).toEqual(got.map((r) => r.json.eventId).reverse());

    const removed = await t.request('DELETE', `/api/orgs/${user.orgSlug}/workspaces/alpha/webhooks/${scoped.id}`, { as: user.as });
    expect(removed.status).toBe(200);
    expect((await t.request('GET', '/api/workspaces/alpha/webhooks', { as: user.as })).body.webhooks).toEqual([]);
  });

  it('active: false stops deliveries and true resumes them', async () => {
    const user = await signInUser(t, 'pause@example.com');
    const hook = await subscribe(user, '/paused', ['row.created']);
    const paused = await t.request('PATCH', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as, body: { active: false } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ active: false, deactivationReason: 'paused' });
    const whilePaused = await addRow(user, 'welcome', 'while paused');

    const resumed = await t.request('PATCH', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as, body: { active: true } });
    expect(resumed.body).toMatchObject({ active: true, deactivationReason: null, deactivatedAt: null });
    const afterResume = await addRow(user, 'welcome', 'after resume');

    const got = await eventually(() => (at('/paused').length >= 1 ? at('/paused') : null));
    // Deliveries go in event order, so the paused write, had it been queued, would have come first.
    expect(got.map((r) => r.json.data.id)).toEqual([afterResume.id]);
    expect(got.some((r) => r.json.data.id === whilePaused.id)).toBe(false);
    const listed = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}/deliveries`, { as: user.as });
    expect(listed.body.deliveries).toHaveLength(1);
  });

  it('holds queued deliveries while paused and sends them, in order, as soon as it is resumed', async () => {
    const user = await signInUser(t, 'held@example.com');
    let open = false;
    receiver.answer = (r) => (r.path === '/held' && !open ? 503 : 200);
    const hook = await subscribe(user, '/held', ['row.created']);
    const first = await addRow(user, 'welcome', 'first');
    const second = await addRow(user, 'welcome', 'second');
    // The first attempt fails; the queue now waits for the retry.
    await eventually(() => at('/held').length >= 1);
    await t.request('PATCH', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as, body: { active: false } });
    open = true;
    const retried = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}/deliveries?status=pending`, { as: user.as });
    expect(retried.body.deliveries.map((d: any) => d.event)).toEqual(['row.created', 'row.created']);
    // Resuming makes the queue due at once (the receiver was fixed): the head is retried, then the rest follows in order.
    await t.request('PATCH', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as, body: { active: true } });
    const got = await eventually(() => (at('/held').filter((r) => r.json.data.id === second.id).length > 0 ? at('/held') : null));
    expect(got.map((r) => r.json.data.id)).toEqual([first.id, first.id, second.id]);
    const sent = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}/deliveries`, { as: user.as });
    expect(sent.body.deliveries.map((d: any) => [d.status, d.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 2],
    ]);
    receiver.answer = () => 200;
  });

  it('does not follow redirects: a 3xx is a failed attempt and its Location is never requested', async () => {
    const user = await signInUser(t, 'redirect@example.com');
    receiver.answer = (r) => (r.path === '/moved' ? 301 : 200);
    const hook = await subscribe(user, '/moved', ['row.created']);
    await addRow(user, 'welcome', 'moved');
    const [delivery] = await eventually(async () => {
      const res = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}/deliveries`, { as: user.as });
      return res.body.deliveries[0]?.attempts === 1 ? res.body.deliveries : null;
    });
    expect(delivery).toMatchObject({ status: 'pending', responseStatus: 301 });
    expect(delivery.error).toMatch(/redirects are not followed/);
    expect(at('/moved')).toHaveLength(1);
    expect(at('/landing')).toHaveLength(0);
    receiver.answer = () => 200;
  });
});
