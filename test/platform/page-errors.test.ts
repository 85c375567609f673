import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JSON_BODY_LIMIT } from '../../src/app';
import { AUTH_FAILURES } from '../../src/http/limits';
import { ManualClock, startTestApp, type TestApp, type TestResponse } from '../helpers/app';
import { resolveSchema, type Schema } from '../helpers/openapi';
import { capsFor } from '../../src/limits/plans';
import { addWorkspaceWithRows } from '../billing/helpers';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Issue 33 item 7: the routes that render pages (local checkout and portal,
 * the OAuth consent flow, the tracker, file share pages) answer an error as
 * the client asked for it. Driven by /openapi.json: every route that can
 * answer `text/html` is walked, and every error status it declares with an
 * `application/json` body is provoked with `Accept: application/json`; the
 * answer must be that JSON, in the declared shape. Where the status also
 * declares a page, the same request with a browser's Accept must get the page.
 */

const JSON_ACCEPT = 'application/json';
/** What Chrome sends for a navigation or a form post. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const FORM = 'application/x-www-form-urlencoded';

type Route = { method: string; path: string; responses: Record<string, Schema> };
/** A request that provokes an error; `beforeRoute` when the platform answers it before any route runs (JSON to everyone, as declared). */
type Provocation = { name: string; url: string | (() => Promise<string>); body?: string; headers?: Record<string, string>; beforeRoute?: boolean };

/** Statuses no request can provoke on these routes, and why. */
const UNREACHABLE: Record<number, string> = {
  503: 'document_too_large: none of these routes loads a document',
};

const clock = new ManualClock();
let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
let openapi: Schema;
let checkoutUrl: URL;
/** A public form that is open, and one whose workspace is at its row cap (docs/TABLES.md "Forms"). */
let openFormPath: string;
let fullFormPath: string;

beforeAll(async () => {
  t = await startTestApp({ clock });
  owner = await signInUser(t, 'pages@example.com');
  const upgrade = await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } });
  expect(upgrade.body.status).toBe('checkout-required');
  checkoutUrl = new URL(upgrade.body.checkoutUrl);
  const openForm = async (slug: string) => {
    const made = await t.request('POST', `/api/workspaces/${slug}/views`, { as: owner.as, body: { name: 'Form', kind: 'form', form: { fields: [{ column: 'title', required: true }], open: true } } });
    expect(made.status, made.text).toBe(200);
    return new URL(made.body.view.publicUrl).pathname;
  };
  await createWorkspace(t, owner, { name: 'Forms', slug: 'forms' });
  openFormPath = await openForm('forms');
  await addWorkspaceWithRows(t, owner, 'full', capsFor('free').rowsPerWorkspace);
  fullFormPath = await openForm('full');
  openapi = (await t.request('GET', '/openapi.json')).body;
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const resolve = (schema: Schema | undefined) => resolveSchema(openapi, schema);

/** Where `value` departs from the JSON schema `schema` (the subset /openapi.json uses), or nothing. */
function departures(value: unknown, schema: Schema | undefined, at = 'body'): string[] {
  const s = resolve(schema);
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).some((option: Schema) => departures(value, option, at).length === 0) ? [] : [`${at}: matches none of its options`];
  if (s.const !== undefined && value !== s.const) return [`${at}: is not ${JSON.stringify(s.const)}`];
  if (s.enum && !s.enum.includes(value)) return [`${at}: is not one of ${s.enum.join(', ')}`];
  const types = [s.type].flat().filter(Boolean);
  const typeOf = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (types.length > 0 && !types.some((type) => type === typeOf || (type === 'number' && typeOf === 'integer'))) return [`${at}: is ${typeOf}, not ${types.join(' or ')}`];
  if (typeOf === 'array' && s.items) return (value as unknown[]).flatMap((item, i) => departures(item, s.items, `${at}[${i}]`));
  if (typeOf !== 'object') return [];
  const object = value as Record<string, unknown>;
  const found = (s.required ?? []).filter((key: string) => !(key in object)).map((key: string) => `${at}.${key}: missing`);
  for (const [key, item] of Object.entries(object)) {
    if (s.properties?.[key]) found.push(...departures(item, s.properties[key], `${at}.${key}`));
    else if (s.additionalProperties === false) found.push(`${at}.${key}: not declared`);
  }
  return found;
}

/** Every route of /openapi.json that can answer a page. */
/**
 * Routes that answer a browser with pages: an error declared as a page, or a success that is a page
 * and nothing else. A route offering HTML as one export format among others (GET /doc?format=html)
 * answers files, not pages.
 */
function pageRoutes(): Route[] {
  const isPage = ([status, response]: [string, unknown]) => {
    const content = Object.keys(resolve(response as Schema).content ?? {});
    return content.includes('text/html') && (Number(status) >= 400 || content.length === 1);
  };
  return Object.entries(openapi.paths as Record<string, Record<string, Schema>>).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => Object.entries(operation.responses ?? {}).some(isPage))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, responses: operation.responses })),
  );
}

/** The path with its parameters filled: `value` for all of them, or by name. */
function fill(path: string, value: (name: string) => string) {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => value(name));
}

const knownParam = (name: string) => (name === 'orgSlug' ? owner.orgSlug : name === 'number' ? '99999' : 'unknown-token');
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const consentFields = { response_type: 'code', client_id: 'no-such-client', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', csrf: 'x', decision: 'approve' };

/** A request each route takes up to its handler: the base of the provocations that do not depend on the input. */
function plain(route: Route): Provocation {
  const url = fill(route.path, knownParam);
  if (route.method === 'GET') return { name: 'a plain request', url: route.path === '/oauth/authorize' ? `${url}?client_id=no-such-client` : url };
  const body = route.path === '/oauth/sign-in' ? form({ email: 'someone@example.com', return_to: '/oauth/authorize?client_id=x' }) : route.path === '/oauth/authorize' ? form(consentFields) : form({ number: '4242 4242 4242 4242' });
  return { name: 'a plain request', url, body, headers: { 'content-type': FORM } };
}

/** Requests that make `route` answer `status`; none when the walk does not know how (which fails it). */
function provoke(route: Route, status: number): Provocation[] {
  const base = plain(route);
  const key = `${route.method} ${route.path.replace(/^\/billing\/(checkout|portal)\//, '/billing/{kind}/')}`;
  const hasPathParams = route.path.includes('{');
  switch (status) {
    case 400: {
      const found: Provocation[] = [];
      // A public form reads its body only once the form is found open.
      if (route.method === 'POST') found.push({ ...base, name: 'a body that is not a form', body: 'hello', headers: { 'content-type': 'text/plain' }, ...(key === 'POST /forms/{token}' ? { url: openFormPath } : {}) });
      if (key === 'GET /oauth/authorize') found.push({ ...base, name: 'a repeated parameter', url: '/oauth/authorize?client_id=a&client_id=b' }, { ...base, name: 'an unknown app' });
      if (key === 'POST /oauth/authorize') found.push({ ...base, name: 'a repeated field', body: `${base.body}&client_id=again` }, { ...base, name: 'an unknown app' });
      if (key === 'POST /oauth/sign-in') found.push({ ...base, name: 'a return address elsewhere', body: form({ email: 'someone@example.com', return_to: '/elsewhere' }) });
      if (key === 'GET /tracker/{orgSlug}/{number}') found.push({ ...base, name: 'a number that is not one', url: fill(route.path, (name) => (name === 'number' ? 'abc' : knownParam(name))) });
      if (route.method === 'GET' && hasPathParams) found.push({ ...base, name: 'a URL that is not UTF-8', url: fill(route.path, (name) => (name === 'number' ? '1' : '%FF')), beforeRoute: true });
      return found;
    }
    case 402:
      return key === 'POST /forms/{token}' ? [{ ...base, name: 'a form whose workspace is at its row cap', url: fullFormPath, body: form({ title: 'One too many' }) }] : [];
    case 401:
      return [{ ...base, name: 'credentials that match nothing', headers: { ...base.headers, authorization: 'Bearer svc_live_no-such-key' } }];
    case 403:
      return key === 'POST /oauth/authorize' ? [{ ...base, name: 'a consent form posted from another site', headers: { ...base.headers, origin: 'https://elsewhere.example' } }] : [];
    case 404:
      return hasPathParams ? [{ ...base, name: 'a path naming nothing' }] : [];
    case 413:
      return [{ ...base, name: 'a body over the limit', body: `name=${'x'.repeat(JSON_BODY_LIMIT)}` }];
    case 415:
      return [{ ...base, name: 'a body of a type the route does not read', body: '<x/>', headers: { 'content-type': 'application/xml' } }];
    case 422: {
      const found: Provocation[] = [];
      if (hasPathParams) found.push({ ...base, name: 'a path parameter over its length', url: fill(route.path, (name) => (name === 'number' ? '0' : 'x'.repeat(300))) });
      if (key === 'GET /oauth/authorize') found.push({ ...base, name: 'an oversized parameter', url: `/oauth/authorize?client_id=${'x'.repeat(4001)}` });
      if (key === 'POST /oauth/authorize') found.push({ ...base, name: 'an oversized field', body: form({ ...consentFields, client_id: 'x'.repeat(4001) }) });
      if (key === 'POST /oauth/sign-in') found.push({ ...base, name: 'an address that is not one', body: form({ email: 'not-an-address', return_to: '/oauth/authorize?client_id=x' }) });
      if (key === 'POST /billing/{kind}/{token}') {
        found.push({ ...base, name: 'a refused card', url: route.path.includes('checkout') ? checkoutUrl.pathname : portalPath, body: form({ number: '4000 0000 0000 0002', expiry: '12/34', cvc: '123' }) });
      }
      return found;
    }
    case 429:
    case 500:
      return [{ ...base, name: status === 429 ? 'an address throttled after failed sign-ins' : 'the rate limiter’s store failing' }];
    default:
      return [];
  }
}

/** A portal link lasts an hour, less than the walk's throttled windows: each refused card gets a fresh one. */
async function portalPath(): Promise<string> {
  const portal = await t.request('POST', '/api/billing/portal', { as: owner.as });
  expect(portal.status, portal.text).toBe(200);
  return new URL(portal.body.url).pathname;
}

async function send(route: Route, provocation: Provocation, accept: string): Promise<TestResponse> {
  const url = typeof provocation.url === 'string' ? provocation.url : await provocation.url();
  return t.request(route.method, url, { headers: { accept, ...provocation.headers }, ...(provocation.body === undefined ? {} : { rawBody: provocation.body }) });
}

/** Sends with the address throttled (the failed-auth limit of every route), then lets the window pass. */
async function throttled(send: () => Promise<TestResponse>): Promise<TestResponse> {
  for (let i = 0; i < AUTH_FAILURES.limit; i++) await t.request('GET', '/api/me', { as: { bearer: 'svc_live_no-such-key' } });
  try {
    return await send();
  } finally {
    clock.advance(AUTH_FAILURES.windowMs + 60_000);
  }
}

/** Sends while the rate limiter's store fails, which every anonymous request consults first. */
async function limiterDown(send: () => Promise<TestResponse>): Promise<TestResponse> {
  const failing = vi.spyOn(t.services.limits.rateLimiter, 'check').mockRejectedValue(new Error('the limiter store is down'));
  try {
    return await send();
  } finally {
    failing.mockRestore();
  }
}

describe('page routes answer their errors as the client asked (issue 33 item 7)', () => {
  it('finds the page routes in /openapi.json, the three of the issue among them', () => {
    const found = pageRoutes().map((route) => `${route.method} ${route.path}`);
    expect(found).toEqual(expect.arrayContaining(['POST /billing/checkout/{token}', 'POST /billing/portal/{token}', 'GET /oauth/authorize']));
  });

  it('every error status declared with a JSON body answers that JSON to `Accept: application/json`, and a page to a browser where one is declared', async () => {
    const failures: string[] = [];
    const checked: string[] = [];
    for (const route of pageRoutes()) {
      for (const [status, declared] of Object.entries(route.responses).map(([code, response]) => [Number(code), resolve(response)] as const)) {
        const json = declared.content?.['application/json'];
        if (status < 400 || !json) continue;
        if (UNREACHABLE[status]) continue;
        const provocations = provoke(route, status);
        if (provocations.length === 0) failures.push(`${route.method} ${route.path} ${status}: the walk does not know how to provoke it; add a provocation`);
        for (const provocation of provocations) {
          const where = `${route.method} ${route.path} ${status} (${provocation.name})`;
          const around = status === 429 ? throttled : status === 500 ? limiterDown : (send: () => Promise<TestResponse>) => send();
          const asApi = await around(() => send(route, provocation, JSON_ACCEPT));
          checked.push(`${where} as JSON`);
          if (asApi.status !== status) failures.push(`${where}: answered ${asApi.status}, not ${status}: ${asApi.text.slice(0, 160)}`);
          else if (!asApi.headers.get('content-type')?.startsWith('application/json')) failures.push(`${where}: answered ${asApi.headers.get('content-type')} to a JSON client: ${asApi.text.slice(0, 80)}`);
          else failures.push(...departures(asApi.body, json.schema).map((problem) => `${where}: ${problem}`));

          if (!declared.content['text/html'] || provocation.beforeRoute) continue;
          const asBrowser = await around(() => send(route, provocation, BROWSER_ACCEPT));
          checked.push(`${where} as a page`);
          if (asBrowser.status !== status) failures.push(`${where}, browser: answered ${asBrowser.status}, not ${status}`);
          else if (!asBrowser.headers.get('content-type')?.startsWith('text/html') || !asBrowser.text.startsWith('<!doctype html>')) {
            failures.push(`${where}, browser: answered ${asBrowser.headers.get('content-type')}: ${asBrowser.text.slice(0, 80)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The three, among everything checked.
    expect(checked).toEqual(
      expect.arrayContaining([
        'POST /billing/checkout/{token} 404 (a path naming nothing) as JSON',
        'POST /billing/portal/{token} 404 (a path naming nothing) as JSON',
        'GET /oauth/authorize 400 (a repeated parameter) as JSON',
        'GET /oauth/authorize 422 (an oversized parameter) as JSON',
      ]),
    );
  }, 300_000);
});
