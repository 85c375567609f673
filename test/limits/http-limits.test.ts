import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock';
import { MINUTE } from '../../src/limits/rules';
import { startTestApp } from '../helpers/app';
import { limitTestRoutes, monthlyHeaders, signedInUser, type HandlerRuns } from './support';

type Started = Awaited<ReturnType<typeof startTestApp>>;

/** A test app with the limit test routes and a clock the test moves. */
async function start(at: string, env: Record<string, string> = {}) {
  const clock = new ManualClock(new Date(at));
  const runs: HandlerRuns = { write: 0, boom: 0, slow: 0 };
  const slowGate = { wait: Promise.resolve() };
  const t = await startTestApp({ clock, env, routes: limitTestRoutes(runs, slowGate) });
  return { t, clock, runs, slowGate };
}

async function stop(t: Started | undefined) {
  if (!t) return;
  await t.close();
  await t.store.dispose();
}

function usedOf(res: { headers: Headers }) {
  return Number(res.headers.get('x-ratelimit-monthly-used'));
}

describe('monthly API calls', () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  let t: Started;
  beforeAll(async () => {
    ctx = await start('2027-01-31T23:58:00Z');
    t = ctx.t;
  });
  afterAll(() => stop(t));

  it('puts the three headers on every response: success, 401, 403, 404 and health', async () => {
    const user = await signedInUser(t.services);
    const responses = [
      await t.request('GET', '/test/echo', { as: user.as }),
      await t.request('POST', '/test/write'),
      await t.request('GET', '/test/forbidden', { as: user.as }),
      await t.request('GET', '/api/nowhere'),
      await t.request('GET', '/api/health'),
      await t.request('OPTIONS', '/test/echo', { headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 403, 404, 200, 204]);
    for (const res of responses) {
      expect(monthlyHeaders(res.headers)).toEqual({ cap: '10000', used: expect.stringMatching(/^\d+$/), reset: '2027-02-01T00:00:00.000Z' });
    }
  });

  it('counts metered calls per organisation, but not health, 401, 403 or unknown routes', async () => {
    const user = await signedInUser(t.services);
    const first = await t.request('GET', '/test/echo', { as: user.as });
    expect(usedOf(first)).toBe(1);
    expect(usedOf(await t.request('GET', '/test/echo', { as: user.as }))).toBe(2);
    // Health skips authentication, yet its headers show the caller's organisation, uncounted.
    expect(usedOf(await t.request('GET', '/api/health', { as: user.as }))).toBe(2);
    expect((await t.request('GET', '/test/forbidden', { as: user.as })).status).toBe(403);
    expect((await t.request('GET', '/api/nowhere', { as: user.as })).status).toBe(404);
    expect(usedOf(await t.request('GET', '/test/echo', { as: user.as }))).toBe(3);
  });

  it('meters anonymous callers per IP, apart from organisations; a 401 is not counted', async () => {
    const before = usedOf(await t.request('GET', '/test/echo'));
    expect((await t.request('POST', '/test/write')).status).toBe(401);
    expect((await t.request('POST', '/test/write', { as: { bearer: 'svc_live_nope' } })).status).toBe(401);
    const after = await t.request('GET', '/test/echo');
    expect(usedOf(after)).toBe(before + 1);
    expect(after.headers.get('x-ratelimit-monthly-cap')).toBe('10000');
  });

  it('persists the count to api_usage', async () => {
    const user = await signedInUser(t.services);
    await t.request('GET', '/test/echo', { as: user.as });
    await t.request('GET', '/test/echo', { as: user.as });
    await t.services.limits.meter.flush();
    const row = await t.services.db.selectFrom('apiUsage').selectAll().where('orgId', '=', user.orgId).executeTakeFirstOrThrow();
    expect(row).toEqual({ orgId: user.orgId, period: '2027-01', calls: 2 });
  });

  it('returns 402 over_limit at the cap, before the handler, and lets the plan raise it at once', async () => {
    const user = await signedInUser(t.services);
    await t.services.db.insertInto('apiUsage').values({ orgId: user.orgId, period: '2027-01', calls: 9_999 }).execute();
    const last = await t.request('POST', '/test/write', { as: user.as, body: {} });
    expect(last.status).toBe(200);
    expect(usedOf(last)).toBe(10_000);
    const runsBefore = ctx.runs.write;

    const refused = await t.request('POST', '/test/write', { as: user.as, body: {} });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({
      code: 'over_limit',
      limit: 'api_calls',
      current: 10_000,
      cap: 10_000,
      message: expect.any(String),
      upgrade_url: `${t.url}/settings/billing`,
      details: { upgrade: expect.objectContaining({ plan: 'pro' }), increase: expect.any(Object) },
      requestId: refused.headers.get('x-request-id'),
    });
    expect(ctx.runs.write).toBe(runsBefore);
    expect(monthlyHeaders(refused.headers)).toMatchObject({ cap: '10000', used: '10000' });
    // Caps gate writes only (SPEC): reads keep answering, and are counted.
    const read = await t.request('GET', '/test/echo', { as: user.as });
    expect(read.status).toBe(200);
    expect(usedOf(read)).toBe(10_001);
    expect((await t.request('GET', '/api/health', { as: user.as })).status).toBe(200);

    await t.services.db.updateTable('orgs').set({ plan: 'pro' }).where('id', '=', user.orgId).execute();
    ctx.clock.advance(1_000);
    const upgraded = await t.request('POST', '/test/write', { as: user.as, body: {} });
    expect(upgraded.status).toBe(200);
    expect(monthlyHeaders(upgraded.headers)).toMatchObject({ cap: '100000', used: '10002' });
  });

  it('starts over at the calendar UTC month boundary', async () => {
    const user = await signedInUser(t.services);
    await t.request('GET', '/test/echo', { as: user.as });
    const january = await t.request('GET', '/test/echo', { as: user.as });
    expect(monthlyHeaders(january.headers)).toMatchObject({ used: '2', reset: '2027-02-01T00:00:00.000Z' });

    ctx.clock.set(new Date('2027-02-01T00:00:00Z'));
    const february = await t.request('GET', '/test/echo', { as: user.as });
    expect(monthlyHeaders(february.headers)).toMatchObject({ used: '1', reset: '2027-03-01T00:00:00.000Z' });

    await t.services.limits.meter.flush();
    const rows = await t.services.db.selectFrom('apiUsage').select(['period', 'calls']).where('orgId', '=', user.orgId).orderBy('period').execute();
    expect(rows).toEqual([
      { period: '2027-01', calls: 2 },
      { period: '2027-02', calls: 1 },
    ]);
  });
});

describe('Idempotency-Key', () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  let t: Started;
  beforeAll(async () => {
    ctx = await start('2027-03-10T12:00:00Z');
    t = ctx.t;
  });
  afterAll(() => stop(t));

  const storedKeys = async () =>
    Number((await t.services.db.selectFrom('idempotencyKeys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('replays the stored status and body, runs nothing, writes nothing and counts nothing', async () => {
    const user = await signedInUser(t.services);
    const headers = { 'idempotency-key': 'order-1' };
    const first = await t.request('POST', '/test/created', { as: user.as, headers, body: { a: 1 } });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const keysAfterFirst = await storedKeys();

    const write = await t.request('POST', '/test/write', { as: user.as, headers: { 'idempotency-key': 'write-1' }, body: { x: 'y' } });
    const runs = ctx.runs.write;
    const replay = await t.request('POST', '/test/write', { as: user.as, headers: { 'idempotency-key': 'write-1' }, body: { x: 'y' } });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(write.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(ctx.runs.write).toBe(runs);
    expect(usedOf(replay)).toBe(usedOf(write));

    const secondReplay = await t.request('POST', '/test/created', { as: user.as, headers, body: { a: 1 } });
    expect(secondReplay.status).toBe(201);
    expect(secondReplay.body).toEqual(first.body);
    expect(await storedKeys()).toBe(keysAfterFirst + 1);
  });

  it('answers 409 conflict when the key comes back with a different request', async () => {
    const user = await signedInUser(t.services);
    const headers = { 'idempotency-key': 'k-conflict' };
    expect((await t.request('POST', '/test/write', { as: user.as, headers, body: { n: 1 } })).status).toBe(200);
    const otherBody = await t.request('POST', '/test/write', { as: user.as, headers, body: { n: 2 } });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.error.code).toBe('conflict');
    const otherPath = await t.request('POST', '/test/created', { as: user.as, headers, body: { n: 1 } });
    expect(otherPath.status).toBe(409);
  });

  it('answers 409 to a duplicate sent while the first is still running', async () => {
    const user = await signedInUser(t.services);
    let open!: () => void;
    ctx.slowGate.wait = new Promise((resolve) => (open = resolve));
    const headers = { 'idempotency-key': 'slow-1' };
    const first = t.request('POST', '/test/slow', { as: user.as, headers });
    while (ctx.runs.slow === 0) await new Promise((r) => setTimeout(r, 5));
    const duplicate = await t.request('POST', '/test/slow', { as: user.as, headers });
    expect(duplicate.status).toBe(409);
    open();
    expect((await first).status).toBe(200);
    const later = await t.request('POST', '/test/slow', { as: user.as, headers });
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(ctx.runs.slow).toBe(1);
  });

  it('does not store a 5xx: the retry runs again', async () => {
    const user = await signedInUser(t.services);
    const headers = { 'idempotency-key': 'boom-1' };
    expect((await t.request('POST', '/test/boom', { as: user.as, headers })).status).toBe(500);
    expect((await t.request('POST', '/test/boom', { as: user.as, headers })).status).toBe(500);
    expect(ctx.runs.boom).toBe(2);
  });

  it('scopes keys to the principal and forgets them after 24 hours', async () => {
    const alice = await signedInUser(t.services);
    const bob = await signedInUser(t.services);
    const headers = { 'idempotency-key': 'shared-name' };
    await t.request('POST', '/test/write', { as: alice.as, headers, body: {} });
    const bobs = await t.request('POST', '/test/write', { as: bob.as, headers, body: {} });
    expect(bobs.headers.get('idempotent-replayed')).toBeNull();

    ctx.clock.advance(24 * 60 * MINUTE);
    const runs = ctx.runs.write;
    const fresh = await t.request('POST', '/test/write', { as: alice.as, headers, body: { different: true } });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(ctx.runs.write).toBe(runs + 1);
  });

  it('rejects a key longer than 255 characters with 400', async () => {
    const user = await signedInUser(t.services);
    const res = await t.request('POST', '/test/write', { as: user.as, headers: { 'idempotency-key': 'k'.repeat(256) }, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    const ok = await t.request('POST', '/test/write', { as: user.as, headers: { 'idempotency-key': 'k'.repeat(255) }, body: {} });
    expect(ok.status).toBe(200);
  });
});

describe('burst limits', () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  let t: Started;
  beforeAll(async () => {
    ctx = await start('2027-04-01T09:00:00Z');
    t = ctx.t;
  });
  afterAll(() => stop(t));

  it('allows 300 writes a minute per session, then 429 with Retry-After and the spec body', async () => {
    const user = await signedInUser(t.services);
    const other = await signedInUser(t.services);
    for (let batch = 0; batch < 6; batch++) {
      const results = await Promise.all(Array.from({ length: 50 }, () => t.request('POST', '/test/write', { as: user.as, body: {} })));
      expect(results.every((r) => r.status === 200)).toBe(true);
    }
    const refused = await t.request('POST', '/test/write', { as: user.as, body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'rate_limited',
      endpoint: 'api_writes',
      limit: 300,
      window: '1m',
      resetAt: '2027-04-01T09:01:00.000Z',
      message: expect.any(String),
      requestId: refused.headers.get('x-request-id'),
    });
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-ratelimit-burst-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-burst-reset')).toBe('60');
    // Reads are not writes, and another session has its own bucket.
    expect((await t.request('GET', '/test/echo', { as: user.as })).status).toBe(200);
    expect((await t.request('POST', '/test/write', { as: other.as, body: {} })).status).toBe(200);

    ctx.clock.advance(MINUTE);
    const again = await t.request('POST', '/test/write', { as: user.as, body: {} });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-ratelimit-burst-remaining')).toBe('299');
  });

  it('applies a route rule whose bucket reads the validated body', async () => {
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.request('POST', '/test/ruled', { body: { name: 'ada' } });
      expect(res.status).toBe(200);
      remaining.push(res.headers.get('x-ratelimit-burst-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await t.request('POST', '/test/ruled', { body: { name: 'ada' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', endpoint: 'test_rule', limit: 3, window: '1m' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await t.request('POST', '/test/ruled', { body: { name: 'grace' } })).status).toBe(200);
  });

  it('does not count a refused call against the monthly cap', async () => {
    const user = await signedInUser(t.services);
    await t.request('POST', '/test/ruled', { as: user.as, body: { name: 'counted' } });
    for (let i = 0; i < 3; i++) await t.request('POST', '/test/ruled', { as: user.as, body: { name: 'counted' } });
    const read = await t.request('GET', '/test/echo', { as: user.as });
    expect(usedOf(read)).toBe(4);
  });
});

describe('failed-auth throttle', () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  let t: Started;
  beforeAll(async () => {
    ctx = await start('2027-05-01T09:00:00Z');
    t = ctx.t;
  });
  afterAll(() => stop(t));

  it('answers 429 to unauthenticated requests from an IP after 50 failures in 10 minutes', async () => {
    const user = await signedInUser(t.services);
    // 403s of a signed-in caller count toward the IP too.
    for (let i = 0; i < 10; i++) expect((await t.request('GET', '/test/forbidden', { as: user.as })).status).toBe(403);
    for (let i = 0; i < 40; i++) {
      expect((await t.request('GET', '/test/echo', { as: { bearer: `svc_live_guess${i}` } })).status).toBe(401);
    }
    const throttled = await t.request('GET', '/test/echo', { as: { bearer: 'svc_live_guess-more' } });
    expect(throttled.status).toBe(429);
    expect(throttled.body).toEqual({
      code: 'rate_limited',
      endpoint: 'auth_failures',
      limit: 50,
      window: '10m',
      resetAt: '2027-05-01T09:10:00.000Z',
      message: expect.any(String),
      requestId: throttled.headers.get('x-request-id'),
    });
    expect(throttled.headers.get('retry-after')).toBe('600');
    expect(monthlyHeaders(throttled.headers).cap).toBe('10000');
    // Anonymous callers from the IP are stopped before any work; a signed-in caller is not.
    expect((await t.request('GET', '/test/echo')).status).toBe(429);
    expect((await t.request('POST', '/test/write')).status).toBe(429);
    expect((await t.request('GET', '/test/echo', { as: user.as })).status).toBe(200);
    expect((await t.request('GET', '/test/forbidden', { as: user.as })).status).toBe(403);

    ctx.clock.advance(10 * MINUTE);
    expect((await t.request('GET', '/test/echo', { as: { bearer: 'svc_live_later' } })).status).toBe(401);
    expect((await t.request('GET', '/test/echo')).status).toBe(200);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('limits shared through Redis (REDIS_URL)', () => {
  let ctx: Awaited<ReturnType<typeof start>>;
  let t: Started;
  beforeAll(async () => {
    ctx = await start('2027-06-30T23:59:00Z', { REDIS_URL: process.env.TEST_REDIS_URL! });
    t = ctx.t;
  });
  afterAll(() => stop(t));

  it('counts monthly calls, persists them and enforces burst rules', async () => {
    const user = await signedInUser(t.services);
    await t.services.db.insertInto('apiUsage').values({ orgId: user.orgId, period: '2027-06', calls: 41 }).execute();
    expect(usedOf(await t.request('GET', '/test/echo', { as: user.as }))).toBe(42);
    expect(usedOf(await t.request('GET', '/api/health', { as: user.as }))).toBe(42);
    await t.services.limits.meter.flush();
    const row = await t.services.db.selectFrom('apiUsage').select('calls').where('orgId', '=', user.orgId).executeTakeFirstOrThrow();
    expect(row.calls).toBe(42);

    for (let i = 0; i < 3; i++) expect((await t.request('POST', '/test/ruled', { as: user.as, body: { name: 'redis' } })).status).toBe(200);
    const refused = await t.request('POST', '/test/ruled', { as: user.as, body: { name: 'redis' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');

    ctx.clock.advance(MINUTE);
    const july = await t.request('POST', '/test/ruled', { as: user.as, body: { name: 'redis' } });
    expect(july.status).toBe(200);
    expect(monthlyHeaders(july.headers)).toMatchObject({ used: '1', reset: '2027-08-01T00:00:00.000Z' });
  });
});
