import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../../src/limits/monthly-meter';
import { CATCH_UP_AFTER_MS } from '../../src/webhooks/outbox';
import { DELIVERY_RETENTION_MS, PgDeliveryStore } from '../../src/webhooks/pg-store';
import { RETRY_DELAYS_MS } from '../../src/webhooks/schedule';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { eventually as eventuallyWithin } from '../helpers/sync';
import { signInUser, type TestUser } from '../workspaces/helpers';
import { insertWebhookBehindTheApp, Receiver } from './receiver';

/**
 * Time-driven behaviour on a fake clock: the automatic retry schedule, the
 * final `failed`, manual retries, deactivation after 3 days of failures
 * (with its mail and event), and the monthly cap of successful deliveries.
 */

const clock = new ManualClock(Date.now());
let t: TestApp & { store: { dispose(): Promise<void> } };
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await t?.store.dispose();
});

/** Generous: a loaded machine runs many suites at once. */
const eventually = <T>(check: () => T | Promise<T>) => eventuallyWithin(check, 20_000);

const at = (path: string) => receiver.received.filter((r) => r.path === path);

async function subscribe(user: TestUser, path: string, events: string[]) {
  const res = await t.request('POST', `/api/orgs/${user.orgSlug}/webhooks`, { as: user.as, body: { url: `${receiver.url}${path}`, events } });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; secret: string };
}

async function addRow(user: TestUser, title: string) {
  const res = await t.request('POST', '/api/workspaces/welcome/rows', { as: user.as, body: { data: { title } } });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string };
}

async function deliveries(user: TestUser, hookId: string) {
  const res = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hookId}/deliveries`, { as: user.as });
  expect(res.status, res.text).toBe(200);
  return res.body.deliveries as any[];
}

/** Moves the fake clock and lets the drain look at once (it also polls every second). */
function advance(ms: number) {
  clock.advance(ms);
  t.services.webhooks.wake();
}

// Many round trips through a real server: generous on a loaded machine (assertions wait for conditions).
describe('retries on a fake clock', { timeout: 240_000 }, () => {
  it('retries a failing delivery on the schedule, marks it failed after the last attempt, and a manual retry then succeeds', async () => {
    const user = await signInUser(t, 'retry@example.com');
    receiver.answer = (r) => (r.path === '/flaky' ? 500 : 200);
    const hook = await subscribe(user, '/flaky', ['row.created']);
    await addRow(user, 'flaky');

    await eventually(() => at('/flaky').length === 1);
    let [delivery] = await eventually(async () => ((await deliveries(user, hook.id))[0]?.attempts === 1 ? deliveries(user, hook.id) : null));
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 500, error: 'HTTP 500' });
    expect(Date.parse(delivery.nextAttemptAt) - Date.parse(delivery.lastAttemptAt)).toBe(RETRY_DELAYS_MS[0]);

    // A second short of the first wait, nothing is sent (the drain polls every second, and was woken).
    advance(RETRY_DELAYS_MS[0] - 1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(at('/flaky')).toHaveLength(1);
    advance(1_000);
    for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
      if (i > 0) advance(RETRY_DELAYS_MS[i]!);
      await eventually(() => at('/flaky').length === i + 2);
      [delivery] = await eventually(async () => {
        const [d] = await deliveries(user, hook.id);
        return d.attempts === i + 2 ? [d] : null;
      });
      const wait = RETRY_DELAYS_MS[i + 1];
      if (wait !== undefined) {
        expect(delivery).toMatchObject({ status: 'pending', attempts: i + 2 });
        expect(Date.parse(delivery.nextAttemptAt) - Date.parse(delivery.lastAttemptAt)).toBe(wait);
      }
    }
    expect(delivery).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null, responseStatus: 500 });

    // Attempts went out when due (the signed timestamp is the fake clock's), all with the same webhook-id.
    const attempts = at('/flaky');
    expect(new Set(attempts.map((a) => a.headers['webhook-id']))).toEqual(new Set([delivery.id]));
    const stamps = attempts.map((a) => Number(a.headers['webhook-timestamp']));
    expect(stamps.slice(1).map((s, i) => (s - stamps[i]!) * 1000)).toEqual([...RETRY_DELAYS_MS]);
    // About a day in all.
    expect((stamps.at(-1)! - stamps[0]!) / 3600).toBeGreaterThan(24);

    // Nothing more happens on its own.
    advance(24 * 3600_000);
    await addRow(user, 'after failure');
    await eventually(() => at('/flaky').length === 9);
    expect(at('/flaky').at(-1)!.json.data.data.title).toBe('after failure');

    receiver.answer = () => 200;
    const retried = await t.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`, { as: user.as });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toMatchObject({ id: delivery.id, status: 'succeeded', attempts: 9, responseStatus: 200, error: null, nextAttemptAt: null });
    expect(at('/flaky').at(-1)!.headers['webhook-id']).toBe(delivery.id);

    const again = await t.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`, { as: user.as });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');

    // Someone else's delivery is not found; without credentials it is 401.
    const stranger = await signInUser(t, 'stranger-retry@example.com');
    expect((await t.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`, { as: stranger.as })).status).toBe(404);
    expect((await t.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`)).status).toBe(401);
    expect((await t.request('POST', '/api/webhook-deliveries/whd_nope/retry', { as: user.as })).status).toBe(404);
  });

  it('turns off a webhook that has failed for 3 days, mails its creator and emits webhook.deactivated; turning it on sends what waited', async () => {
    const user = await signInUser(t, 'down@example.com');
    let down = true;
    receiver.answer = (r) => (r.path === '/down' && down ? 503 : 200);
    const watcher = await subscribe(user, '/watch', ['webhook.deactivated']);
    const hook = await subscribe(user, '/down', ['row.created']);
    const rows = [await addRow(user, 'a'), await addRow(user, 'b'), await addRow(user, 'c'), await addRow(user, 'd')];

    await eventually(() => at('/down').length === 1);
    const firstFailure = Number(at('/down')[0]!.headers['webhook-timestamp']) * 1000;
    // Walk the fake clock from one attempt to the next until the webhook is off.
    for (let step = 0; step < 40; step++) {
      const current = (await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as })).body;
      if (!current.active) break;
      const pending = (await deliveries(user, hook.id)).filter((d) => d.status === 'pending');
      const head = pending.at(-1);
      const seen = at('/down').length;
      clock.set(Math.max(clock.now().getTime(), Date.parse(head.nextAttemptAt)));
      t.services.webhooks.wake();
      await eventually(() => at('/down').length > seen);
      await eventually(async () => (await deliveries(user, hook.id)).every((d) => d.status !== 'pending' || Date.parse(d.nextAttemptAt) > clock.now().getTime() || d.attempts === 0));
    }
    const off = (await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as })).body;
    expect(off).toMatchObject({ active: false, deactivationReason: 'failing' });
    expect(Math.floor(Date.parse(off.failingSince) / 1000) * 1000).toBe(firstFailure);
    const lastAttempt = Number(at('/down').at(-1)!.headers['webhook-timestamp']) * 1000;
    expect(lastAttempt - firstFailure).toBeGreaterThanOrEqual(3 * 24 * 3600_000);
    expect(lastAttempt - firstFailure).toBeLessThan(4 * 24 * 3600_000);

    const notice = await eventually(() => at('/watch').find((r) => r.json.event === 'webhook.deactivated'));
    expect(notice.json.data).toMatchObject({ webhookId: hook.id, host: new URL(receiver.url).host, reason: 'failing', active: false });
    expect(JSON.stringify(notice.json)).not.toContain('/down');
    expect(notice.json.principal).toBeNull();
    const mail = await eventually(async () => (await t.outbox()).find((m) => m.to === user.email && /turned off/.test(m.subject)));
    expect(mail.text).toContain(hook.id);
    expect(watcher.id).not.toBe(hook.id);

    // Turned back on, the deliveries still queued go out at once, in order.
    const before = (await deliveries(user, hook.id)).filter((d) => d.status === 'pending');
    expect(before.length).toBeGreaterThan(0);
    down = false;
    const on = await t.request('PATCH', `/api/orgs/${user.orgSlug}/webhooks/${hook.id}`, { as: user.as, body: { active: true } });
    expect(on.body).toMatchObject({ active: true, failingSince: null, deactivationReason: null });
    await eventually(async () => (await deliveries(user, hook.id)).every((d) => d.status === 'succeeded' || d.status === 'failed'));
    const resent = at('/down').slice(-before.length);
    expect(resent.map((r) => r.json.eventId)).toEqual(before.map((d) => d.eventId).reverse());
    expect(resent.map((r) => r.json.data.id)).toEqual(rows.slice(rows.length - before.length).map((r) => r.id));
  });

  it('counts only 2xx deliveries toward the monthly cap; at the cap deliveries wait, and go when the plan rises or the month turns', async () => {
    const user = await signInUser(t, 'cap@example.com');
    const period = monthOf(clock.now()).period;
    // One successful delivery left on the free plan's 1,000.
    await t.services.db.insertInto('webhookUsage').values({ orgId: user.orgId, period, delivered: 999 }).execute();
    let failing = true;
    receiver.answer = (r) => (r.path === '/capped' && failing ? 500 : 200);
    const hook = await subscribe(user, '/capped', ['row.created']);

    // Failures do not count: after one failed attempt, the retry still fits under the cap.
    const a = await addRow(user, 'a');
    await eventually(() => at('/capped').length === 1);
    failing = false;
    await eventually(async () => ((await deliveries(user, hook.id))[0]?.attempts === 1 ? true : null));
    advance(RETRY_DELAYS_MS[0]);
    await eventually(() => at('/capped').length === 2);
    expect(at('/capped')[1]!.json.data.id).toBe(a.id);

    // That success reached 1,000: the next delivery waits and says why.
    const b = await addRow(user, 'b');
    const waiting = await eventually(async () => (await deliveries(user, hook.id)).find((d) => d.eventId !== at('/capped')[1]!.json.eventId));
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0 });
    expect(waiting.error).toMatch(/monthly webhook delivery cap/);
    const refused = await t.request('POST', `/api/webhook-deliveries/${waiting.id}/retry`, { as: user.as });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'over_limit', limit: 'webhook_deliveries', current: 1000, cap: 1000 });
    t.services.webhooks.wake();
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // over a poll: it stays unsent
    expect(at('/capped').some((r) => r.json.data.id === b.id)).toBe(false);

    // A higher plan takes effect at once.
    await t.services.db.updateTable('orgs').set({ plan: 'pro' }).where('id', '=', user.orgId).execute();
    t.services.webhooks.wake();
    await eventually(() => at('/capped').some((r) => r.json.data.id === b.id));

    // At the pro cap, the next one waits for the month to turn.
    await t.services.db.updateTable('webhookUsage').set({ delivered: 10_000 }).where('orgId', '=', user.orgId).where('period', '=', period).execute();
    const c = await addRow(user, 'c');
    const seen = at('/capped').length;
    t.services.webhooks.wake();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(at('/capped').length).toBe(seen);
    clock.set(monthOf(clock.now()).resetAt.getTime() + 1_000);
    t.services.webhooks.wake();
    await eventually(() => at('/capped').some((r) => r.json.data.id === c.id));
  });

  it('catches up on the deliveries another instance missed while its cache did not know a new subscription', async () => {
    const user = await signInUser(t, 'catchup@example.com');
    // This instance has looked at the org (sign-in recorded events): its cache says "no webhooks" until it expires.
    const before = await addRow(user, 'before the subscription');
    // Another instance creates a subscription, as createWebhook does, without this instance hearing of it.
    const { max } = await t.services.db.selectFrom('events').select((eb) => eb.fn.max('seq').as('max')).executeTakeFirstOrThrow();
    const id = await insertWebhookBehindTheApp(t, user, { url: `${receiver.url}/catchup`, events: ['row.created'], catchupAfterSeq: Number(max) });
    const missed = await addRow(user, 'written with a stale cache');
    expect(await deliveries(user, id)).toEqual([]);

    // Once every instance's cache has expired, the catch-up writes what was missed, and it is sent.
    advance(CATCH_UP_AFTER_MS);
    const got = await eventually(() => at('/catchup').find((r) => r.json.data.id === missed.id));
    expect(got.json.event).toBe('row.created');
    const after = await addRow(user, 'with a fresh cache');
    await eventually(() => at('/catchup').some((r) => r.json.data.id === after.id));
    expect(at('/catchup').map((r) => r.json.data.id)).toEqual([missed.id, after.id]);
    expect(at('/catchup').some((r) => r.json.data.id === before.id)).toBe(false);
  });

  it('forgets finished deliveries after the retention period, never pending ones', async () => {
    const user = await signInUser(t, 'prune@example.com');
    let failing = false;
    receiver.answer = (r) => (r.path === '/prune' && failing ? 500 : 200);
    const hook = await subscribe(user, '/prune', ['row.created']);
    await addRow(user, 'delivered');
    await eventually(async () => (await deliveries(user, hook.id))[0]?.status === 'succeeded');
    failing = true;
    await addRow(user, 'still pending');
    await eventually(async () => (await deliveries(user, hook.id))[0]?.attempts === 1);

    const store = new PgDeliveryStore(t.services.db);
    await store.prune(new Date(clock.now().getTime() + DELIVERY_RETENTION_MS - 60_000));
    expect((await deliveries(user, hook.id)).map((d) => d.status)).toEqual(['pending', 'succeeded']);
    expect(await store.prune(new Date(clock.now().getTime() + DELIVERY_RETENTION_MS + 60_000))).toBeGreaterThan(0);
    expect((await deliveries(user, hook.id)).map((d) => d.status)).toEqual(['pending']);
  });
});
