import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE } from '../../src/limits/rules';
import { ManualClock, startTestApp, type Credential, type TestResponse } from '../helpers/app';
import { latestMagicToken, signIn } from '../helpers/sign-in';

/**
 * Bad input never writes. Every route of the platform issue gets malformed
 * JSON, wrong types, oversize strings and unknown fields; each answer must be
 * 400 (wrong shape) or 422 (a value breaks a constraint) per API-DECISIONS in
 * the error envelope, and the database and the outbox must be exactly as
 * before. `api_usage` is left out: a refused call may still be metered.
 */

type Started = Awaited<ReturnType<typeof startTestApp>>;

const TABLES = [
  'orgs',
  'principals',
  'users',
  'orgMembers',
  'sessions',
  'magicLinks',
  'waitlist',
  'elevationGrants',
  'elevationCodes',
  'workspaces',
  'surfaces',
  'memberships',
  'agents',
  'apiKeys',
  'invites',
  'idempotencyKeys',
  'events',
] as const;

type Snapshot = { tables: Record<string, unknown[]>; outbox: string };

async function snapshot(t: Started): Promise<Snapshot> {
  const tables: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = (await t.services.db.selectFrom(table).selectAll().execute()).map((row) => JSON.stringify(row));
    tables[table] = rows.sort().map((row) => JSON.parse(row));
  }
  const outbox = await fs.readFile(path.join(t.dataDir, 'outbox.jsonl'), 'utf8').catch(() => '');
  return { tables, outbox };
}

/** Sign-in seeds the welcome workspace; its documents and events may land just after the answer. Wait until nothing moves. */
async function settledSnapshot(t: Started): Promise<Snapshot> {
  let previous = await snapshot(t);
  for (let attempt = 0; attempt < 50; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const current = await snapshot(t);
    if (JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  throw new Error('the database did not settle after setup');
}

const TOO_BIG = 11 * 1024 * 1024; // over the 10 MB JSON body limit
const LONG_EMAIL = `${'a'.repeat(288)}@example.com`; // 300 characters
const HUGE = 'x'.repeat(10_000);

type Case = {
  name: string;
  method: string;
  /** A function when it needs state from setup (the pending magic-link token). */
  path: string | (() => string);
  /** `owner` is a signed-in session; `forged` sends a session cookie that matches nothing. */
  caller: 'anonymous' | 'owner' | 'forged';
  headers?: Record<string, string>;
  body?: unknown;
  raw?: string;
  contentType?: string;
  status: number;
  code?: string;
  /** The expected `details[]`, as [path, code] pairs, in order. */
  details?: Array<[string[], string]>;
};

// Filled in by setup: a live, unredeemed magic link that any accepted GET /api/auth would consume.
let pendingToken = '';
const redeemPath = (query: string) => () => `/api/auth?${query.replaceAll('TOKEN', encodeURIComponent(pendingToken))}`;

/** The shape-and-type cases every JSON body route gets, plus its own below. */
function commonBodyCases(method: string, path: string, caller: Case['caller'], validBody: Record<string, unknown>): Case[] {
  return [
    { name: 'malformed JSON', method, path, caller, raw: '{"name": "unterminated', status: 400, code: 'bad_request', details: [[[], 'invalid_json']] },
    { name: 'JSON with a trailing comma', method, path, caller, raw: `${JSON.stringify(validBody).slice(0, -1)},}`, status: 400, code: 'bad_request', details: [[[], 'invalid_json']] },
    { name: 'a JSON array body', method, path, caller, body: [validBody], status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a JSON string body', method, path, caller, body: 'just a string', status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a text/plain body', method, path, caller, raw: JSON.stringify(validBody), contentType: 'text/plain', status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a form-encoded body', method, path, caller, raw: 'name=x', contentType: 'application/x-www-form-urlencoded', status: 415, code: 'unsupported_media_type' },
    { name: 'an unknown field', method, path, caller, body: { ...validBody, isAdmin: true }, status: 400, code: 'bad_request', details: [[['isAdmin'], 'unrecognized_keys']] },
    {
      name: 'a __proto__ field',
      method,
      path,
      caller,
      raw: `{${JSON.stringify(validBody).slice(1, -1)}${Object.keys(validBody).length ? ',' : ''}"__proto__":{"isAdmin":true}}`,
      status: 400,
      code: 'bad_request',
      details: [[['__proto__'], 'unrecognized_keys']],
    },
    { name: 'an unknown field with a 10k string', method, path, caller, body: { ...validBody, note: HUGE }, status: 400, code: 'bad_request', details: [[['note'], 'unrecognized_keys']] },
    { name: 'a body over the size limit', method, path, caller, body: { ...validBody, padding: 'p'.repeat(TOO_BIG) }, status: 413, code: 'payload_too_large' },
  ];
}

const CASES: Record<string, Case[]> = {
  'POST /api/auth': [
    ...commonBodyCases('POST', '/api/auth', 'anonymous', { email: 'new@example.com' }),
    { name: 'an empty body', method: 'POST', path: '/api/auth', caller: 'anonymous', raw: '', status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'null', method: 'POST', path: '/api/auth', caller: 'anonymous', raw: 'null', status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a missing e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: {}, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'a number e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: 5 }, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'an array e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: ['new@example.com'] }, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'a null e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: null }, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'an e-mail without @', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: 'new.example.com' }, status: 422, code: 'validation', details: [[['email'], 'invalid_format']] },
    { name: 'a 300-character e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: LONG_EMAIL }, status: 422, code: 'validation', details: [[['email'], 'too_big']] },
    { name: 'a 10k-character e-mail', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: `${HUGE}@example.com` }, status: 422, code: 'validation', details: [[['email'], 'too_big']] },
    { name: 'an unknown field and a valid e-mail of a new user', method: 'POST', path: '/api/auth', caller: 'anonymous', body: { email: 'new@example.com', redirect: 'https://evil.example' }, status: 400, code: 'bad_request', details: [[['redirect'], 'unrecognized_keys']] },
  ],

  'GET /api/auth?token': [
    { name: 'no token', method: 'GET', path: '/api/auth', caller: 'anonymous', status: 400, code: 'bad_request', details: [[['querystring', 'token'], 'invalid_type']] },
    { name: 'an empty token', method: 'GET', path: '/api/auth?token=', caller: 'anonymous', status: 422, code: 'validation', details: [[['querystring', 'token'], 'too_small']] },
    { name: 'a 300-character token', method: 'GET', path: `/api/auth?token=${'t'.repeat(300)}`, caller: 'anonymous', status: 422, code: 'validation', details: [[['querystring', 'token'], 'too_big']] },
    { name: 'a 10k-character token', method: 'GET', path: `/api/auth?token=${HUGE}`, caller: 'anonymous', status: 422, code: 'validation', details: [[['querystring', 'token'], 'too_big']] },
    { name: 'the live token twice (an array)', method: 'GET', path: redeemPath('token=TOKEN&token=TOKEN'), caller: 'anonymous', status: 400, code: 'bad_request', details: [[['querystring', 'token'], 'invalid_type']] },
    { name: 'the live token and an unknown parameter', method: 'GET', path: redeemPath('token=TOKEN&next=https://evil.example'), caller: 'anonymous', status: 400, code: 'bad_request', details: [[['querystring', 'next'], 'unrecognized_keys']] },
  ],

  'GET /api/me': [
    { name: 'a forged cookie', method: 'GET', path: '/api/me', caller: 'forged', status: 401, code: 'unauthorized' },
    { name: 'a malformed Authorization header', method: 'GET', path: '/api/me', caller: 'anonymous', headers: { authorization: 'Bearer two words' }, status: 401, code: 'unauthorized' },
  ],

  'PATCH /api/me': [
    ...commonBodyCases('PATCH', '/api/me', 'owner', { name: 'Renamed' }),
    { name: 'a number name', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: 5 }, status: 400, code: 'bad_request', details: [[['name'], 'invalid_type']] },
    { name: 'a null name', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: null }, status: 400, code: 'bad_request', details: [[['name'], 'invalid_type']] },
    { name: 'an object avatarUrl', method: 'PATCH', path: '/api/me', caller: 'owner', body: { avatarUrl: { href: 'https://x.example' } }, status: 400, code: 'bad_request', details: [[['avatarUrl'], 'invalid_type']] },
    { name: 'an e-mail change through the profile', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: 'Renamed', email: 'attacker@example.com' }, status: 400, code: 'bad_request', details: [[['email'], 'unrecognized_keys']] },
    { name: 'a 10k-character name', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: HUGE }, status: 422, code: 'validation', details: [[['name'], 'too_big']] },
    { name: 'an empty name', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: '' }, status: 422, code: 'validation', details: [[['name'], 'too_small']] },
    { name: 'a blank name', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: '   ' }, status: 422, code: 'validation', details: [[['name'], 'too_small']] },
    { name: 'an avatarUrl that is not a URL', method: 'PATCH', path: '/api/me', caller: 'owner', body: { avatarUrl: 'my face' }, status: 422, code: 'validation', details: [[['avatarUrl'], 'invalid_format']] },
    { name: 'a javascript: avatarUrl', method: 'PATCH', path: '/api/me', caller: 'owner', body: { avatarUrl: 'javascript:alert(document.cookie)' }, status: 422, code: 'validation', details: [[['avatarUrl'], 'invalid_format']] },
    { name: 'a data: avatarUrl', method: 'PATCH', path: '/api/me', caller: 'owner', body: { avatarUrl: 'data:text/html,<script>alert(1)</script>' }, status: 422, code: 'validation', details: [[['avatarUrl'], 'invalid_format']] },
    { name: 'a 3000-character avatarUrl', method: 'PATCH', path: '/api/me', caller: 'owner', body: { avatarUrl: `https://img.example/${'a'.repeat(2980)}` }, status: 422, code: 'validation', details: [[['avatarUrl'], 'too_big']] },
    { name: 'a valid name with a bad avatarUrl', method: 'PATCH', path: '/api/me', caller: 'owner', body: { name: 'Half applied', avatarUrl: 'ftp://img.example/me.png' }, status: 422, code: 'validation', details: [[['avatarUrl'], 'invalid_format']] },
  ],

  'DELETE /api/me/sessions': [
    { name: 'malformed JSON', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', raw: '{"all": tru', status: 400, code: 'bad_request', details: [[[], 'invalid_json']] },
    { name: 'an unknown field', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', body: { keepCurrent: true }, status: 400, code: 'bad_request', details: [[['keepCurrent'], 'unrecognized_keys']] },
    { name: 'an unknown field with a 10k string', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', body: { reason: HUGE }, status: 400, code: 'bad_request', details: [[['reason'], 'unrecognized_keys']] },
    { name: 'a JSON array body', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', body: ['all'], status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a JSON string body', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', body: 'all', status: 400, code: 'bad_request', details: [[[], 'invalid_type']] },
    { name: 'a body over the size limit', method: 'DELETE', path: '/api/me/sessions', caller: 'owner', body: { padding: 'p'.repeat(TOO_BIG) }, status: 413, code: 'payload_too_large' },
  ],

  'GET /api/me/org': [
    { name: 'a forged cookie', method: 'GET', path: '/api/me/org', caller: 'forged', status: 401, code: 'unauthorized' },
    { name: 'a 10k-character bearer', method: 'GET', path: '/api/me/org', caller: 'anonymous', headers: { authorization: `Bearer svc_live_${HUGE}` }, status: 401, code: 'unauthorized' },
  ],

  'PATCH /api/me/org': [
    ...commonBodyCases('PATCH', '/api/me/org', 'owner', { name: 'Renamed org' }),
    { name: 'a number name', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { name: 5 }, status: 400, code: 'bad_request', details: [[['name'], 'invalid_type']] },
    { name: 'an unknown visibility', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { defaultWorkspaceVisibility: 'public' }, status: 400, code: 'bad_request', details: [[['defaultWorkspaceVisibility'], 'invalid_value']] },
    { name: 'a null visibility', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { defaultWorkspaceVisibility: null }, status: 400, code: 'bad_request', details: [[['defaultWorkspaceVisibility'], 'invalid_value']] },
    { name: 'a plan change through settings', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { name: 'Renamed org', plan: 'scale' }, status: 400, code: 'bad_request', details: [[['plan'], 'unrecognized_keys']] },
    { name: 'a slug change through settings', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { slug: 'taken-over' }, status: 400, code: 'bad_request', details: [[['slug'], 'unrecognized_keys']] },
    { name: 'a 10k-character name', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { name: HUGE }, status: 422, code: 'validation', details: [[['name'], 'too_big']] },
    { name: 'a blank name', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { name: ' ' }, status: 422, code: 'validation', details: [[['name'], 'too_small']] },
    { name: 'a valid visibility with a bad name', method: 'PATCH', path: '/api/me/org', caller: 'owner', body: { defaultWorkspaceVisibility: 'org', name: '' }, status: 422, code: 'validation', details: [[['name'], 'too_small']] },
  ],

  'POST /api/me/elevate': [
    ...commonBodyCases('POST', '/api/me/elevate', 'owner', { scope: 'keys' }),
    { name: 'no scope', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: {}, status: 400, code: 'bad_request', details: [[['scope'], 'invalid_value']] },
    { name: 'an unknown scope', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: 'root' }, status: 400, code: 'bad_request', details: [[['scope'], 'invalid_value']] },
    { name: 'an array scope', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: ['keys'] }, status: 400, code: 'bad_request', details: [[['scope'], 'invalid_value']] },
    { name: 'a number code', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: 'keys', code: 123456 }, status: 400, code: 'bad_request', details: [[['code'], 'invalid_type']] },
    { name: 'a code that is not six digits', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: 'keys', code: '12ab56' }, status: 422, code: 'validation', details: [[['code'], 'invalid_format']] },
    { name: 'a 10k-character code', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: 'keys', code: '1'.repeat(10_000) }, status: 422, code: 'validation', details: [[['code'], 'invalid_format']] },
    { name: 'a 10k-character scope', method: 'POST', path: '/api/me/elevate', caller: 'owner', body: { scope: HUGE }, status: 400, code: 'bad_request', details: [[['scope'], 'invalid_value']] },
  ],

  'POST /api/waitlist': [
    ...commonBodyCases('POST', '/api/waitlist', 'anonymous', { email: 'wait@example.com' }),
    { name: 'a missing e-mail', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { source: 'landing' }, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'a number e-mail', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 42 }, status: 400, code: 'bad_request', details: [[['email'], 'invalid_type']] },
    { name: 'a number source', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait@example.com', source: 5 }, status: 400, code: 'bad_request', details: [[['source'], 'invalid_type']] },
    { name: 'an object ref', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait@example.com', ref: { code: 'x' } }, status: 400, code: 'bad_request', details: [[['ref'], 'invalid_type']] },
    { name: 'allow-listing yourself', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait@example.com', allowed: true }, status: 400, code: 'bad_request', details: [[['allowed'], 'unrecognized_keys']] },
    { name: 'an invalid e-mail', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait at example.com' }, status: 422, code: 'validation', details: [[['email'], 'invalid_format']] },
    { name: 'a 300-character e-mail', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: LONG_EMAIL }, status: 422, code: 'validation', details: [[['email'], 'too_big']] },
    { name: 'a 10k-character source', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait@example.com', source: HUGE }, status: 422, code: 'validation', details: [[['source'], 'too_big']] },
    { name: 'a 101-character ref', method: 'POST', path: '/api/waitlist', caller: 'anonymous', body: { email: 'wait@example.com', ref: 'r'.repeat(101) }, status: 422, code: 'validation', details: [[['ref'], 'too_big']] },
  ],
};

describe('bad input never writes', () => {
  let t: Started;
  const clock = new ManualClock();
  let owner: Credential;
  let baseline: Snapshot;
  let caseNumber = 0;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    owner = { cookie: (await signIn(t, 'owner@example.com')).cookie };
    // A stale session: a valid POST /api/me/elevate would mail a code and store it.
    clock.advance(16 * MINUTE);
    // A live link: a GET /api/auth that got through would sign a new user in.
    expect((await t.request('POST', '/api/auth', { body: { email: 'pending@example.com' } })).status).toBe(200);
    pendingToken = await latestMagicToken(t, 'pending@example.com');
    baseline = await settledSnapshot(t);
  });
  afterAll(async () => {
    await t.close();
    await t.store.dispose();
  });

  async function send(c: Case): Promise<TestResponse> {
    const headers: Record<string, string> = { ...c.headers };
    if (c.contentType) headers['content-type'] = c.contentType;
    // Owner writes carry an Idempotency-Key: a refused request must not store a replayable answer either.
    if (c.caller === 'owner' && c.method !== 'GET') headers['idempotency-key'] = `bad-input-${++caseNumber}`;
    const as = c.caller === 'owner' ? owner : c.caller === 'forged' ? { cookie: 'forged-session-token' } : undefined;
    const urlPath = typeof c.path === 'function' ? c.path() : c.path;
    return t.request(c.method, urlPath, { as, headers, ...(c.raw !== undefined ? { rawBody: c.raw } : c.body !== undefined ? { body: c.body } : {}) });
  }

  for (const [route, cases] of Object.entries(CASES)) {
    describe(route, () => {
      for (const c of cases) {
        it(`${c.name} → ${c.status}${c.code ? ` ${c.code}` : ''}, nothing written`, async () => {
          const before = await snapshot(t);
          const res = await send(c);

          expect({ status: res.status, body: res.body }).toMatchObject({ status: c.status });
          expect(res.body).toStrictEqual({
            error: {
              code: c.code,
              message: expect.any(String),
              ...(c.details ? { details: c.details.map(([detailPath, code]) => ({ path: detailPath, code, message: expect.any(String) })) } : {}),
            },
            requestId: res.headers.get('x-request-id'),
          });
          expect(res.headers.get('set-cookie')).toBeNull();
          expect(res.headers.get('idempotent-replayed')).toBeNull();

          expect(await snapshot(t)).toEqual(before);
        });
      }
    });
  }

  describe('routes that take no input ignore unknown query parameters and change nothing', () => {
    for (const urlPath of ['/api/me?fields=all&admin=1', '/api/me/org?plan=scale&role=owner']) {
      it(`GET ${urlPath}`, async () => {
        const before = await snapshot(t);
        const res = await t.request('GET', urlPath, { as: owner });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject(urlPath.startsWith('/api/me/org') ? { plan: 'free', role: 'owner' } : { user: { email: 'owner@example.com' } });
        expect(await snapshot(t)).toEqual(before);
      });
    }
  });

  it('after every bad request the database and the outbox are exactly as they started', async () => {
    expect(await snapshot(t)).toEqual(baseline);
  });

  it('the snapshot does see writes: the same routes with good input change it', async () => {
    const db = t.services.db;
    // The live link survived the bad redemptions and still signs in.
    const redeemed = await t.request('GET', `/api/auth?token=${encodeURIComponent(pendingToken)}`);
    expect(redeemed.status).toBe(302);
    expect(await db.selectFrom('users').select('email').where('email', '=', 'pending@example.com').executeTakeFirst()).toBeTruthy();

    expect((await t.request('PATCH', '/api/me', { as: owner, body: { name: 'Renamed', avatarUrl: 'https://img.example/me.png' } })).status).toBe(200);
    expect((await t.request('PATCH', '/api/me/org', { as: owner, body: { name: 'Renamed org' } })).status).toBe(200);
    expect((await t.request('POST', '/api/me/elevate', { as: owner, body: { scope: 'keys' } })).body).toEqual({ status: 'code_sent' });
    expect((await t.request('POST', '/api/waitlist', { body: { email: 'wait@example.com' } })).status).toBe(200);
    expect((await t.request('POST', '/api/auth', { body: { email: 'new@example.com' } })).status).toBe(200);
    expect((await t.request('DELETE', '/api/me/sessions', { as: owner })).body).toEqual({ revokedSessions: 1 });

    const after = await snapshot(t);
    for (const table of ['users', 'principals', 'orgs', 'sessions', 'magicLinks', 'waitlist', 'elevationCodes'] as const) {
      expect(after.tables[table], table).not.toEqual(baseline.tables[table]);
    }
    expect(after.outbox).not.toBe(baseline.outbox);
  });

  it('a request refused for bad input leaves its Idempotency-Key free for the corrected retry', async () => {
    const me = { cookie: (await signIn(t, 'retry@example.com')).cookie };
    const headers = { 'idempotency-key': 'fix-and-retry' };
    expect((await t.request('PATCH', '/api/me', { as: me, headers, body: { name: '' } })).status).toBe(422);
    expect((await t.request('PATCH', '/api/me', { as: me, headers, rawBody: '{"name":' })).status).toBe(400);
    const fixed = await t.request('PATCH', '/api/me', { as: me, headers, body: { name: 'Fixed' } });
    expect(fixed.status).toBe(200);
    expect(fixed.body.user.name).toBe('Fixed');
    const replay = await t.request('PATCH', '/api/me', { as: me, headers, body: { name: 'Fixed' } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });
});
