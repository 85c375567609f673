import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, MINUTE } from '../../src/limits/rules';
import { ManualClock, startTestApp, type Credential, type TestResponse } from '../helpers/app';
import { signIn } from '../helpers/sign-in';

/**
 * Every error code and body shape of API-DECISIONS "Errors", each provoked by
 * a real request against the real app, with strict equality on the body's
 * keys and `x-request-id` equal to `requestId` on every one.
 */

type Started = Awaited<ReturnType<typeof startTestApp>>;

const SECRET = 'postgres://admin:hunter2@db.internal:5432/trellis';

/** Test-only routes that fail the way real bugs do: a thrown error, a response that breaks its own schema. */
function failingRoutes(app: Started['app']) {
  app.get('/test/explode', { config: { auth: 'none' } }, async () => {
    throw new Error(`connection to ${SECRET} refused`);
  });
  app.post('/test/explode-later', { config: { auth: 'none' } }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    throw Object.assign(new TypeError(`cannot read ${SECRET}`), { statusCode: 500, code: 'E_SECRET' });
  });
  app.get(
    '/test/bad-response',
    { config: { auth: 'none' }, schema: { response: { 200: z.object({ ok: z.literal(true) }) } } },
    async () => ({ ok: SECRET }) as unknown as { ok: true },
  );
}

/** The request id header is on the response and is the body's `requestId`. */
function expectRequestId(res: TestResponse) {
  const header = res.headers.get('x-request-id');
  expect(header).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(res.body.requestId).toBe(header);
}

/** The standard envelope, exactly: `{ error: { code, message, details? }, requestId }` and nothing else. */
function expectEnvelope(res: TestResponse, status: number, code: string, details?: unknown) {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code } } });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expectRequestId(res);
  expect(res.body).toStrictEqual({
    error: { code, message: expect.any(String), ...(details === undefined ? {} : { details }) },
    requestId: res.headers.get('x-request-id'),
  });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}

/** One `details[]` entry: `{ path: string[], code, message }`, nothing more. */
const detail = (path: string[], code: string) => ({ path, code, message: expect.any(String) });

function expectDetailsShape(details: unknown) {
  expect(Array.isArray(details)).toBe(true);
  for (const entry of details as Array<Record<string, unknown>>) {
    expect(Object.keys(entry).sort()).toEqual(['code', 'message', 'path']);
    expect(Array.isArray(entry.path) && (entry.path as unknown[]).every((segment) => typeof segment === 'string')).toBe(true);
    expect(typeof entry.code).toBe('string');
    expect(typeof entry.message).toBe('string');
  }
}

describe('error shapes and codes', () => {
  let t: Started;
  const clock = new ManualClock();
  let owner: { cookie: string; orgSlug: string; as: Credential };
  let key: Credential;

  beforeAll(async () => {
    t = await startTestApp({ clock, routes: failingRoutes });
    const signedIn = await signIn(t, 'owner@example.com');
    owner = { ...signedIn, as: { cookie: signedIn.cookie } };
    // The session is fresh, so the `keys` elevation is granted at once.
    expect((await t.request('POST', '/api/me/elevate', { as: owner.as, body: { scope: 'keys' } })).status).toBe(200);
    const minted = await t.request('POST', '/api/keys', { as: owner.as, body: { name: 'ci', agentName: 'robot', role: 'editor' } });
    expect(minted.status).toBe(200);
    key = { bearer: minted.body.secret };
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  describe('400 bad_request: the request has the wrong shape', () => {
    it('a body that is not JSON', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, rawBody: '{"name": "Half' });
      expectEnvelope(res, 400, 'bad_request', [detail([], 'invalid_json')]);
      expectDetailsShape(res.body.error.details);
    });

    it('a field of the wrong type', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 42, slug: 'numbers', mode: 'table' } });
      expectEnvelope(res, 400, 'bad_request', [detail(['name'], 'invalid_type')]);
    });

    it('a missing required field', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'No slug', mode: 'table' } });
      expectEnvelope(res, 400, 'bad_request', [detail(['slug'], 'invalid_type')]);
    });

    it('unknown fields, each named in details', async () => {
      const res = await t.request('POST', '/api/workspaces', {
        as: owner.as,
        body: { name: 'Extra', slug: 'extra', mode: 'table', owner: 'someone-else', plan: 'scale' },
      });
      expectEnvelope(res, 400, 'bad_request', [detail(['owner'], 'unrecognized_keys'), detail(['plan'], 'unrecognized_keys')]);
      expectDetailsShape(res.body.error.details);
    });

    it('an unknown query parameter is named with its location', async () => {
      const res = await t.request('GET', '/api/auth?token=abc&redirect=https://evil.example');
      expectEnvelope(res, 400, 'bad_request', [detail(['querystring', 'redirect'], 'unrecognized_keys')]);
    });

    it('an unknown enum value', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Sheet', slug: 'sheet', mode: 'spreadsheet' } });
      expectEnvelope(res, 400, 'bad_request', [detail(['mode'], 'invalid_value')]);
    });

    it('a shape problem wins over a constraint problem in the same body, and both are listed', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 7, slug: 'Not A Slug', mode: 'table' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
      expect(res.body.error.details).toEqual(expect.arrayContaining([detail(['name'], 'invalid_type'), detail(['slug'], 'invalid_format')]));
      expectDetailsShape(res.body.error.details);
      expectRequestId(res);
    });
  });

  describe('422 validation: the shape is right but a value breaks a constraint', () => {
    it('an invalid e-mail', async () => {
      const res = await t.request('POST', '/api/auth', { body: { email: 'not-an-email' } });
      expectEnvelope(res, 422, 'validation', [detail(['email'], 'invalid_format')]);
      expectDetailsShape(res.body.error.details);
    });

    it('a string that is too long', async () => {
      const res = await t.request('PATCH', '/api/me', { as: owner.as, body: { name: 'n'.repeat(101) } });
      expectEnvelope(res, 422, 'validation', [detail(['name'], 'too_big')]);
    });

    it('a slug that breaks the pattern', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Bad slug', slug: 'Bad Slug!', mode: 'table' } });
      expectEnvelope(res, 422, 'validation', [detail(['slug'], 'invalid_format')]);
    });
  });

  describe('401 unauthorized', () => {
    it('no credentials', async () => {
      expectEnvelope(await t.request('GET', '/api/me'), 401, 'unauthorized');
      expectEnvelope(await t.request('POST', '/api/workspaces', { body: { name: 'Anon', slug: 'anon', mode: 'table' } }), 401, 'unauthorized');
    });

    it('an invalid bearer key, token or scheme', async () => {
      expectEnvelope(await t.request('GET', '/api/me', { as: { bearer: 'svc_live_not-a-real-key' } }), 401, 'unauthorized');
      expectEnvelope(await t.request('GET', '/api/me', { as: { bearer: 'oat_not-a-real-token' } }), 401, 'unauthorized');
      expectEnvelope(await t.request('GET', '/api/me', { headers: { authorization: 'Basic b3duZXI6aHVudGVyMg==' } }), 401, 'unauthorized');
    });

    it('an invalid session cookie on a route that requires a caller', async () => {
      expectEnvelope(await t.request('GET', '/api/me/org', { as: { cookie: 'forged-session-token' } }), 401, 'unauthorized');
      expectEnvelope(await t.request('PATCH', '/api/me/org', { as: { cookie: 'forged-session-token' }, body: { name: 'Mine now' } }), 401, 'unauthorized');
    });
  });

  describe('401 elevation_required', () => {
    it('names the scope in details.requiredScope once the grant has lapsed, and changes nothing', async () => {
      const signedIn = await signIn(t, 'sudo@example.com');
      const sudo = { cookie: signedIn.cookie };
      const granted = await t.request('POST', '/api/me/elevate', { as: sudo, body: { scope: 'workspace_delete' } });
      expect(granted.status).toBe(200);

      // Both the grant (15 minutes after last use) and the sign-in freshness lapse.
      clock.advance(16 * MINUTE);
      const archive = await t.request('DELETE', '/api/workspaces/welcome', { as: sudo });
      expectEnvelope(archive, 401, 'elevation_required', { requiredScope: 'workspace_delete' });
      const mint = await t.request('POST', '/api/keys', { as: sudo, body: { name: 'late', agentName: 'late-bot', role: 'viewer' } });
      expectEnvelope(mint, 401, 'elevation_required', { requiredScope: 'keys' });

      const listed = await t.request('GET', '/api/workspaces', { as: sudo });
      expect(listed.body.workspaces.map((w: { slug: string }) => w.slug)).toContain('welcome');
      const keys = await t.request('GET', '/api/keys', { as: sudo });
      expect(keys.body.keys).toEqual([]);
      // Elevating now takes a mailed code.
      expect((await t.request('POST', '/api/me/elevate', { as: sudo, body: { scope: 'workspace_delete' } })).body).toEqual({ status: 'code_sent' });
    });
  });

  describe('403 forbidden', () => {
    it('an org member who is not the owner changing the organisation', async () => {
      const signedIn = await signIn(t, 'member@example.com');
      const member = { cookie: signedIn.cookie };
      const ownerOrg = await t.services.db.selectFrom('orgs').select(['id', 'name']).where('slug', '=', owner.orgSlug).executeTakeFirstOrThrow();
      const memberId = (await t.services.db.selectFrom('users').select('id').where('email', '=', 'member@example.com').executeTakeFirstOrThrow()).id;
      await t.services.db.insertInto('orgMembers').values({ orgId: ownerOrg.id, userId: memberId, role: 'editor' }).execute();
      await t.services.db.updateTable('users').set({ primaryOrgId: ownerOrg.id }).where('id', '=', memberId).execute();

      expect((await t.request('GET', '/api/me/org', { as: member })).body).toMatchObject({ id: ownerOrg.id, role: 'editor' });
      const res = await t.request('PATCH', '/api/me/org', { as: member, body: { name: 'Taken over' } });
      expectEnvelope(res, 403, 'forbidden');
      const after = await t.services.db.selectFrom('orgs').select('name').where('id', '=', ownerOrg.id).executeTakeFirstOrThrow();
      expect(after.name).toBe(ownerOrg.name);
    });

    it('an API key on routes for people signed in with a session', async () => {
      expect((await t.request('GET', '/api/me', { as: key })).status).toBe(200);
      expectEnvelope(await t.request('PATCH', '/api/me', { as: key, body: { name: 'Renamed by a bot' } }), 403, 'forbidden');
      expectEnvelope(await t.request('POST', '/api/me/elevate', { as: key, body: { scope: 'keys' } }), 403, 'forbidden');
      expectEnvelope(await t.request('DELETE', '/api/me/sessions', { as: key }), 403, 'forbidden');
      // The owner's browser session survived the key's attempt.
      expect((await t.request('GET', '/api/me', { as: owner.as })).body.user.name).toBe('owner');
    });
  });

  describe('404 not_found', () => {
    it('a missing workspace and an unknown route', async () => {
      expectEnvelope(await t.request('GET', '/api/workspaces/no-such-workspace', { as: owner.as }), 404, 'not_found');
      expectEnvelope(await t.request('DELETE', '/api/no/such/route', { as: owner.as }), 404, 'not_found');
    });
  });

  describe('409 conflict', () => {
    it('a slug already taken in the organisation', async () => {
      const res = await t.request('POST', '/api/workspaces', { as: owner.as, body: { name: 'Another welcome', slug: 'welcome', mode: 'doc' } });
      expectEnvelope(res, 409, 'conflict');
      const welcome = await t.request('GET', '/api/workspaces/welcome', { as: owner.as });
      expect(welcome.body).toMatchObject({ name: 'Welcome', mode: 'table' });
    });
  });

  describe('402 over_limit', () => {
    it('the plan cap on a create, with the spec body, upgrade hints and nothing created', async () => {
      const signedIn = await signIn(t, 'capped@example.com');
      const capped = { cookie: signedIn.cookie };
      const orgId = (await t.services.db.selectFrom('orgs').select('id').where('slug', '=', signedIn.orgSlug).executeTakeFirstOrThrow()).id;
      // The free plan allows 20 live workspaces; `welcome` is the first.
      await t.services.db
        .insertInto('workspaces')
        .values(Array.from({ length: 19 }, (_, i) => ({ id: `wsp_cap${i}`, orgId, slug: `filler-${i}`, name: `Filler ${i}`, mode: 'table' as const, visibility: 'private' as const })))
        .execute();
      const countLive = async () =>
        Number((await t.services.db.selectFrom('workspaces').select((eb) => eb.fn.countAll<number>().as('n')).where('orgId', '=', orgId).executeTakeFirstOrThrow()).n);

      const res = await t.request('POST', '/api/workspaces', { as: capped, body: { name: 'One too many', slug: 'one-too-many', mode: 'table' } });
      expect(res.status).toBe(402);
      expectRequestId(res);
      expect(res.body).toStrictEqual({
        code: 'over_limit',
        limit: 'workspaces',
        current: 20,
        cap: 20,
        message: expect.any(String),
        upgrade_url: `${t.url}/settings/billing`,
        details: {
          upgrade: { message: expect.any(String), mcpTool: 'upgrade_plan', api: 'POST /api/billing/upgrade', plan: 'pro' },
          increase: { mcpTool: 'request_limit_increase', api: 'POST /api/billing/request-limit-increase' },
        },
        requestId: res.headers.get('x-request-id'),
      });
      expect(await countLive()).toBe(20);
    });
  });

  describe('500 internal', () => {
    const expectOpaque = (res: TestResponse) => {
      expectEnvelope(res, 500, 'internal');
      expect(res.body.error.message).toBe('Internal server error.');
      for (const leak of ['hunter2', 'db.internal', 'Error', 'TypeError', 'E_SECRET', ' at ', '.ts', 'stack']) expect(res.text).not.toContain(leak);
    };

    it('an unhandled exception answers the envelope without a stack or the error text', async () => {
      expectOpaque(await t.request('GET', '/test/explode'));
      expectOpaque(await t.request('POST', '/test/explode-later', { body: {} }));
    });

    it('a handler answer that breaks its own response schema is a 500, not a leak', async () => {
      expectOpaque(await t.request('GET', '/test/bad-response'));
    });
  });

  describe('request ids', () => {
    it('a sane client x-request-id is echoed into the error body', async () => {
      const res = await t.request('GET', '/api/workspaces/missing', { as: owner.as, headers: { 'x-request-id': 'trace-7f3a.client:1' } });
      expect(res.status).toBe(404);
      expect(res.headers.get('x-request-id')).toBe('trace-7f3a.client:1');
      expect(res.body.requestId).toBe('trace-7f3a.client:1');
    });

    it('every error response has its own id', async () => {
      const ids = await Promise.all(Array.from({ length: 5 }, () => t.request('GET', '/api/me').then((res) => res.body.requestId)));
      expect(new Set(ids).size).toBe(5);
    });
  });

  describe('CORS', () => {
    const origin = 'https://app.elsewhere.example';

    // Another site's page gets `*` without credentials (test/platform/cors.test.ts has the credentialed side).
    it('is open on error responses, exposing the headers a client needs to read them', async () => {
      for (const res of [
        await t.request('GET', '/api/me', { headers: { origin } }),
        await t.request('POST', '/api/workspaces', { as: owner.as, headers: { origin }, body: { name: 1 } }),
        await t.request('GET', '/api/nowhere', { headers: { origin } }),
        await t.request('GET', '/test/explode', { headers: { origin } }),
      ]) {
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
        const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
        expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'x-ratelimit-burst-remaining', 'x-ratelimit-monthly-used']));
      }
    });

    it('answers a preflight to write routes', async () => {
      for (const [method, path] of [
        ['POST', '/api/workspaces'],
        ['PATCH', '/api/me/org'],
        ['DELETE', '/api/me/sessions'],
        ['POST', '/api/auth'],
      ] as const) {
        const res = await t.request('OPTIONS', path, {
          headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, authorization, idempotency-key' },
        });
        expect(res.status).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
        expect(res.headers.get('access-control-allow-methods')).toContain(method);
        const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
        expect(allowed).toEqual(expect.arrayContaining(['content-type', 'authorization', 'idempotency-key']));
        expect(res.headers.get('x-request-id')).toBeTruthy();
      }
    });
  });
});

describe('429 rate_limited on magic links', () => {
  let t: Started;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  const mailsTo = async (email: string) => (await t.outbox()).filter((mail) => mail.to === email).length;

  it('refuses the sixth link for one e-mail within an hour with the spec body and Retry-After, and mails nothing', async () => {
    const start = clock.now();
    const burst: Array<[string | null, string | null]> = [];
    for (let i = 0; i < 5; i++) {
      // Letter case does not make a new bucket.
      const res = await t.request('POST', '/api/auth', { body: { email: i % 2 ? 'Six@Example.COM' : 'six@example.com' } });
      expect(res.status).toBe(200);
      burst.push([res.headers.get('x-ratelimit-burst-remaining'), res.headers.get('x-ratelimit-burst-reset')]);
      clock.advance(MINUTE);
    }
    // Remaining counts down; the reset is when the oldest link leaves the hour.
    expect(burst).toEqual([
      ['4', '3600'],
      ['3', '3540'],
      ['2', '3480'],
      ['1', '3420'],
      ['0', '3360'],
    ]);
    expect(await mailsTo('six@example.com')).toBe(5);

    const sixth = await t.request('POST', '/api/auth', { body: { email: 'six@example.com' } });
    expect(sixth.status).toBe(429);
    expectRequestId(sixth);
    expect(sixth.body).toStrictEqual({
      code: 'rate_limited',
      endpoint: 'magic_link_email',
      limit: 5,
      window: '1h',
      resetAt: new Date(start.getTime() + HOUR).toISOString(),
      message: expect.any(String),
      requestId: sixth.headers.get('x-request-id'),
    });
    // Five minutes have passed since the first link: 55 minutes to wait.
    expect(sixth.headers.get('retry-after')).toBe(String(55 * 60));
    expect(sixth.headers.get('x-ratelimit-burst-remaining')).toBe('0');
    expect(sixth.headers.get('x-ratelimit-burst-reset')).toBe(String(55 * 60));
    expect(await mailsTo('six@example.com')).toBe(5);
    expect(await t.services.db.selectFrom('magicLinks').select('email').where('email', '=', 'six@example.com').execute()).toHaveLength(5);

    // Another address is not affected, and the window slides: once the first link is an hour old, one more is allowed.
    expect((await t.request('POST', '/api/auth', { body: { email: 'other@example.com' } })).status).toBe(200);
    clock.set(start.getTime() + HOUR);
    const later = await t.request('POST', '/api/auth', { body: { email: 'six@example.com' } });
    expect(later.status).toBe(200);
    expect(await mailsTo('six@example.com')).toBe(6);
  });

  it('refuses the 21st link from one IP within an hour', async () => {
    // In the last hour this IP sent six links: four to six@ (the first is now an hour old), other@, and six@ again.
    // The refused sixth took no IP slot.
    for (let i = 0; i < 14; i++) expect((await t.request('POST', '/api/auth', { body: { email: `ip-${i}@example.com` } })).status).toBe(200);
    const refused = await t.request('POST', '/api/auth', { body: { email: 'ip-last@example.com' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', endpoint: 'magic_link_ip', limit: 20, window: '1h' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await mailsTo('ip-last@example.com')).toBe(0);
  });
});
