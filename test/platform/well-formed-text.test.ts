import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { ManualClock, startTestApp, type TestResponse } from '../helpers/app';
import { resolveSchema, type Schema } from '../helpers/openapi';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { createWorkspace, elevate, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Text is well-formed at every entrance (issue 8). Driven by /openapi.json
 * the way a fuzzer would be: every operation is called with a lone UTF-16
 * surrogate in every string its request schema names (bodies, query
 * strings), and over sync with one in a cell key, a cell value and doc
 * text. Nothing may answer 500, and everything read back is well-formed.
 * Every status answered, to those and to hostile inputs (wrong types,
 * unknown tokens, oversized or repeated parameters, `__proto__` keys, deep
 * nesting), is declared for its operation with its content type (issue 22
 * item 5), so a client generated from /openapi.json handles it.
 */

const LONE = 'fuzz\ud800lone\udc00';
/** The same in a query string: CESU-8 bytes of a lone surrogate, which a UTF-8 decoder can only replace. */
const LONE_QUERY = 'fuzz%ED%A0%80lone';

type Operation = { method: string; path: string; operation: Schema };

let t: Awaited<ReturnType<typeof startTestApp>>;
// Moved on between hostile operations so that burst and failed-auth windows do not hide what lies behind them.
const clock = new ManualClock();
let owner: TestUser;
let openapi: Schema;
const fixture = { rowId: '', tableSurfaceId: '', docSurfaceId: '', keyId: '', memberId: '', agentId: '', docVersion: '', tableVersion: '' };
let slugCounter = 0;

beforeAll(async () => {
  t = await startTestApp({ clock, env: { API_WRITES_PER_MINUTE: '100000' } });
  owner = await signInUser(t, 'fuzz-owner@example.com');
  await createWorkspace(t, owner, { name: 'Fuzz', slug: 'fuzz' });
  for (const surface of [
    { kind: 'doc', slug: 'notes', name: 'Notes' },
    { kind: 'html', slug: 'page', name: 'Page' },
  ]) {
    const res = await t.request('POST', '/api/workspaces/fuzz/surfaces', { as: owner.as, body: surface });
    expect(res.status).toBe(200);
  }
  const surfaces = (await t.request('GET', '/api/workspaces/fuzz/surfaces', { as: owner.as })).body.surfaces;
  fixture.tableSurfaceId = surfaces.find((s: Schema) => s.kind === 'table').id;
  fixture.docSurfaceId = surfaces.find((s: Schema) => s.slug === 'notes').id;
  const row = await t.request('POST', '/api/workspaces/fuzz/rows', { as: owner.as, body: { data: { title: 'seed' } } });
  fixture.rowId = row.body.id;
  // Real version tokens, so writes that take a base reach the code behind it (docs/VERSIONS.md).
  fixture.docVersion = (await t.request('GET', '/api/workspaces/fuzz/doc?surface=notes', { as: owner.as })).headers.get('etag') ?? '';
  fixture.tableVersion = (await t.request('GET', `/api/workspaces/fuzz/rows/${row.body.id}`, { as: owner.as })).headers.get('etag') ?? '';
  await elevate(t, owner, 'keys');
  await elevate(t, owner, 'workspace_delete');
  const key = await t.request('POST', '/api/keys', { as: owner.as, body: { name: 'seed', agentName: 'seed-agent', scopeSlug: 'fuzz', role: 'editor' } });
  expect(key.status).toBe(200);
  fixture.keyId = key.body.key.id;
  fixture.agentId = key.body.key.agent.id;
  const members = (await t.request('GET', '/api/workspaces/fuzz/members', { as: owner.as })).body.members;
  fixture.memberId = members.find((m: Schema) => m.principalType === 'agent').id;
  openapi = (await t.request('GET', '/openapi.json')).body;
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const resolve = (schema: Schema | undefined) => resolveSchema(openapi, schema);

/** A value for a field whose name says what it identifies, so the request reaches the code behind validation. */
function knownValue(name: string | undefined, path: string): unknown {
  switch (name) {
    case 'slug':
      return `fuzz-made-${++slugCounter}`;
    case 'scopeSlug':
      return 'fuzz';
    case 'surface':
      return /\/(doc|sections)/.test(path) ? 'notes' : 'table';
    case 'surfaceId':
      return /\/(doc|sections)/.test(path) ? fixture.docSurfaceId : fixture.tableSurfaceId;
    case 'rowIds':
      return [fixture.rowId];
    case 'baseVersion':
      return path.endsWith('/doc') ? fixture.docVersion : fixture.tableVersion;
    case 'id':
      return path.includes('/rows') ? fixture.rowId : undefined;
    case 'role':
      return path.includes('/keys') ? 'viewer' : undefined;
    case 'content':
      return path.endsWith('/doc')
        ? {
            type: 'doc',
            content: [{ type: 'paragraph', content: [{ type: 'text', text: LONE, marks: [{ type: 'link', attrs: { href: `https://example.com/${LONE}` } }] }] }],
          }
        : undefined;
    default:
      return undefined;
  }
}

function stringFor(schema: Schema, name: string | undefined, path: string): string {
  const known = knownValue(name, path);
  if (typeof known === 'string') return known;
  if (schema.format === 'email') return 'fuzz\ud800@example.com';
  if (schema.format === 'uri') return 'https://example.com/fuzz\ud800';
  if (schema.format === 'date-time') return new Date().toISOString();
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern, 'u');
    const candidate = ['fuzz', `fuzz-${++slugCounter}`, 'a1'].find((c) => pattern.test(c));
    if (candidate) return candidate;
  }
  const max = schema.maxLength ?? Infinity;
  return max >= LONE.length ? LONE : '\ud800'.repeat(Math.max(1, Math.min(max, schema.minLength ?? 1)));
}

/** A request value from a JSON schema, with a lone surrogate in every free string. */
function generate(raw: Schema | undefined, everything: boolean, path: string, name?: string, depth = 0): unknown {
  const schema = resolve(raw);
  if (depth > 12) return LONE;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const live = branches.filter((b: Schema) => resolve(b).type !== 'null');
    return generate(live[0] ?? branches[0], everything, path, name, depth + 1);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  const known = knownValue(name, path);
  if (known !== undefined && type !== 'string') return known;
  switch (type) {
    case 'string':
      return stringFor(schema, name, path);
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => generate(schema.items, everything, path, name, depth + 1));
    case 'object':
    default: {
      if (type === undefined && !schema.properties && !schema.additionalProperties) return LONE;
      const out: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [key, property] of Object.entries<Schema>(schema.properties ?? {})) {
        if (everything || required.has(key)) out[key] = generate(property, everything, path, key, depth + 1);
      }
      if (schema.additionalProperties) {
        const value = schema.additionalProperties === true ? LONE : generate(schema.additionalProperties, everything, path, undefined, depth + 1);
        out['key\ud800fuzz'] = value;
        out.title = value;
      }
      return out;
    }
  }
}

function pathFor(template: string): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    switch (name) {
      case 'slug':
        return template.startsWith('/api/orgs/{slug}') ? owner.orgSlug : 'fuzz';
      case 'orgSlug':
        return owner.orgSlug;
      case 'surfaceSlug':
        return template.includes('/html') ? 'page' : 'notes';
      case 'id':
        if (template.includes('/rows/')) return fixture.rowId;
        if (template.includes('/keys/')) return fixture.keyId;
        if (template.includes('/agents/')) return fixture.agentId;
        return 'no-such-id';
      case 'memberId':
        return fixture.memberId;
      case 'userId':
        return owner.userId;
      default:
        return 'fuzz';
    }
  });
}

function operations(): Operation[] {
  const all: Operation[] = [];
  for (const [path, methods] of Object.entries<Schema>(openapi.paths)) {
    for (const [method, operation] of Object.entries<Schema>(methods)) all.push({ method: method.toUpperCase(), path, operation });
  }
  // Reads first, then writes, then deletes; signing out comes last of all.
  const rank = (op: Operation) => (op.path === '/api/me/sessions' ? 4 : op.method === 'GET' ? 0 : op.method === 'DELETE' ? 3 : 1);
  return all.sort((a, b) => rank(a) - rank(b));
}

/** Why an answer is not what the operation declares, or null when it is. */
function undeclared(op: Operation, res: TestResponse, variant: string): string | null {
  const responses: Schema = op.operation.responses ?? {};
  const declared = responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default;
  const where = `${op.method} ${op.path} (${variant})`;
  if (!declared) return `${where}: ${res.status} is not declared (${Object.keys(responses).join(', ')}): ${res.text.slice(0, 120)}`;
  const type = res.headers.get('content-type')?.split(';')[0]?.trim();
  if (!type || res.text === '') return null;
  const content = Object.keys(resolve(declared).content ?? {});
  if (content.length > 0 && !content.includes(type)) return `${where}: ${res.status} answered ${type}, declared ${content.join(', ')}`;
  return null;
}

async function call(op: Operation, everything: boolean): Promise<TestResponse> {
  const query = (op.operation.parameters ?? [])
    .filter((p: Schema) => p.in === 'query' && (everything || p.required))
    .map((p: Schema) => {
      const schema = resolve(p.schema);
      const known = knownValue(p.name, op.path);
      if (typeof known === 'string') return `${encodeURIComponent(p.name)}=${encodeURIComponent(known)}`;
      const value = schema.enum ? schema.enum[0] : schema.type === 'integer' || schema.type === 'number' ? String(schema.minimum ?? 1) : LONE_QUERY;
      return `${encodeURIComponent(p.name)}=${value}`;
    });
  const url = pathFor(op.path) + (query.length > 0 ? `?${query.join('&')}` : '');
  const json = op.operation.requestBody?.content?.['application/json']?.schema;
  const body = json ? generate(json, everything, op.path) : undefined;
  return t.request(op.method, url, { as: owner.as, ...(body === undefined ? {} : { body }) });
}

/** Every string in a parsed JSON body, keys included. */
function illFormedStrings(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) found.push(JSON.stringify(value));
  } else if (Array.isArray(value)) {
    for (const item of value) illFormedStrings(item, found);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (!key.isWellFormed()) found.push(JSON.stringify(key));
      illFormedStrings(item, found);
    }
  }
  return found;
}

describe('lone surrogates in every string field of every operation', () => {
  it('never answer 500, and reach the routes that store text', async () => {
    const failures: string[] = [];
    const succeeded = new Set<string>();
    for (const op of operations()) {
      if (op.path.endsWith('/subscribe')) continue; // a stream that never ends; its query is covered by the rows listing's parser
      for (const everything of [false, true]) {
        const res = await call(op, everything);
        if (res.status >= 500) failures.push(`${op.method} ${op.path} (${everything ? 'all fields' : 'required'}): ${res.status} ${res.text.slice(0, 200)}`);
        const stray = undeclared(op, res, everything ? 'all fields' : 'required');
        if (stray) failures.push(stray);
        if (res.status < 300) succeeded.add(`${op.method} ${op.path}`);
        if (res.body !== undefined) expect(illFormedStrings(res.body), `${op.method} ${op.path}`).toEqual([]);
      }
    }
    // The last operation signed the owner out; the next tests sign in again.
    owner = await signInUser(t, owner.email);
    // ...and the deletes archived the workspace.
    expect((await t.request('POST', '/api/workspaces/fuzz/unarchive', { as: owner.as })).status).toBe(200);
    expect(failures).toEqual([]);
    // The writes the outside report found answering 500 now store the text.
    for (const op of [
      'POST /api/workspaces',
      'PATCH /api/workspaces/{slug}',
      'POST /api/workspaces/{slug}/surfaces',
      'POST /api/keys',
      'POST /api/workspaces/{slug}/rows',
      'PATCH /api/workspaces/{slug}/rows/{id}',
      'PUT /api/workspaces/{slug}/doc',
      'POST /api/workspaces/{slug}/doc/sections',
      'PUT /api/workspaces/{slug}/surfaces/{surfaceSlug}/html',
      'POST /api/orgs/{orgSlug}/workspaces/{slug}/rows',
    ]) {
      expect(succeeded, op).toContain(op);
    }
  }, 180_000);

  it('stores U+FFFD where a lone surrogate was sent, and every read is well-formed', async () => {
    const created = await t.request('POST', '/api/workspaces/fuzz/rows', { as: owner.as, body: { data: { title: 'a\ud800b', 'k\udc00': 'v' } } });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ title: 'a\uFFFDb', 'k\uFFFD': 'v' });
    const named = await t.request('PATCH', '/api/workspaces/fuzz', { as: owner.as, body: { name: 'Fuzz \ud800 name' } });
    expect(named.body.name).toBe('Fuzz \uFFFD name');
    const put = await t.request('PUT', '/api/workspaces/fuzz/doc', { as: owner.as, body: { markdown: '# Head\ud800ing\n\ntext \udc00 here' } });
    expect(put.status).toBe(200);
    const markdown = await t.request('GET', '/api/workspaces/fuzz/doc?format=markdown', { as: owner.as });
    expect(markdown.body.markdown).toContain('Head\uFFFDing');
    expect(markdown.body.markdown).toContain('text \uFFFD here');
    const nul = await t.request('POST', '/api/workspaces/fuzz/rows', { as: owner.as, body: { data: { title: 'nul\u0000byte' } } });
    expect(nul.status).toBe(200);
    expect(nul.body.data.title).toBe('nul\uFFFDbyte');

    for (const op of operations().filter((o) => o.method === 'GET' && !o.path.endsWith('/subscribe'))) {
      const res = await call(op, false);
      expect(res.status, `${op.method} ${op.path}`).toBeLessThan(500);
      if (res.body !== undefined) expect(illFormedStrings(res.body), `${op.method} ${op.path}`).toEqual([]);
    }
    const events = await t.request('GET', '/api/workspaces/fuzz/events?limit=200', { as: owner.as });
    expect(events.body.events.length).toBeGreaterThan(5);
    expect(illFormedStrings(events.body)).toEqual([]);
  });

  it('refuses JSON nested deeper than anything a route takes, with 400', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const res = await t.request('POST', '/api/workspaces/fuzz/rows', { as: owner.as, rawBody: `{"data":{"title":${deep}}}` });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
  });
});

describe('lone surrogates over sync', () => {
  it('in a cell key, a cell value and doc text: applied, stored and read back well-formed', async () => {
    const surfaces = (await t.request('GET', '/api/workspaces/fuzz/surfaces', { as: owner.as })).body.surfaces;
    const tables = surfaces.find((s: Schema) => s.kind === 'table');
    const notes = surfaces.find((s: Schema) => s.id === fixture.docSurfaceId);
    const table = connectClient(t.url, tables.syncDocument, { cookie: owner.cookie });
    const doc = connectClient(t.url, notes.syncDocument, { cookie: owner.cookie });
    await Promise.all([synced(table), synced(doc)]);

    table.doc.transact(() => {
      const row = new Y.Map<unknown>();
      row.set('title', 'cell\ud800value');
      row.set('key\udc00', 'x');
      table.doc.getMap('rows').set('sync-fuzz-row', row);
      ((table.doc.getMap('sheets').get(tables.id) as Y.Map<Y.Array<string>>).get('order') as Y.Array<string>).push(['sync-fuzz-row']);
    });
    doc.doc.transact(() => {
      const paragraph = new Y.XmlElement('paragraph');
      paragraph.insert(0, [new Y.XmlText('typed \ud800 text')]);
      doc.doc.getXmlFragment('default').insert(0, [paragraph]);
    });
    await Promise.all([acknowledged(table), acknowledged(doc)]);

    const row = await eventually(async () => {
      const res = await t.request('GET', '/api/workspaces/fuzz/rows/sync-fuzz-row', { as: owner.as });
      return res.status === 200 ? res : null;
    });
    expect(row.body.data).toMatchObject({ title: 'cell\uFFFDvalue', 'key\uFFFD': 'x' });
    const markdown = await eventually(async () => {
      const res = await t.request('GET', '/api/workspaces/fuzz/doc?format=markdown&surface=notes', { as: owner.as });
      return res.body?.markdown?.includes('typed') ? res : null;
    });
    expect(markdown.body.markdown).toContain('typed \uFFFD text');
    const projected = await eventually(() => t.services.db.selectFrom('tableRows').select('data').where('id', '=', 'sync-fuzz-row').executeTakeFirst());
    expect(projected.data).toMatchObject({ title: 'cell\uFFFDvalue' });
    table.destroy();
    doc.destroy();
  });
});

/** Every value of a generated body turned into a wrong JSON type. */
function wrongTypes(value: unknown): unknown {
  if (typeof value === 'string') return 12345;
  if (typeof value === 'number') return 'not a number';
  if (typeof value === 'boolean') return 'yes';
  if (value === null) return { null: true };
  if (Array.isArray(value)) return { 0: value.map(wrongTypes) };
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, wrongTypes(v)]));
  return value;
}

type Hostile = { variant: string; url: string; as?: { cookie: string } | { bearer: string }; body?: unknown; rawBody?: string; headers?: Record<string, string> };

function hostileCalls(op: Operation): Hostile[] {
  const params: Schema[] = op.operation.parameters ?? [];
  const queryParams = params.filter((p) => p.in === 'query');
  const base = pathFor(op.path);
  const json = op.operation.requestBody?.content?.['application/json']?.schema;
  const form = op.operation.requestBody?.content?.['application/x-www-form-urlencoded'];
  const valid = json ? generate(json, false, op.path) : undefined;
  const calls: Hostile[] = [
    { variant: 'anonymous', url: base },
    { variant: 'unknown bearer', url: base, as: { bearer: 'svc_live_no_such_key' } },
    { variant: 'unknown ids and tokens', url: op.path.replace(/\{(\w+)\}/g, 'no-such-thing-0') },
    { variant: 'lone surrogate in the path', url: op.path.replace(/\{(\w+)\}/g, LONE_QUERY) },
    { variant: 'oversized path parameters', url: op.path.replace(/\{(\w+)\}/g, 'p'.repeat(1_000)) },
    { variant: 'a path parameter past the router limit', url: op.path.replace(/\{(\w+)\}/, 'p'.repeat(8_000)).replace(/\{(\w+)\}/g, 'x') },
  ];
  if (queryParams.length > 0) {
    const each = (value: (p: Schema) => string) => queryParams.map((p) => `${encodeURIComponent(p.name)}=${value(p)}`).join('&');
    calls.push(
      // Over any parameter's maxLength, within Node's 16 KB request head (past it Node itself answers 431 before any route).
      { variant: 'oversized query parameters', url: `${base}?${each(() => 'q'.repeat(Math.floor(12_000 / queryParams.length)))}` },
      { variant: 'repeated query parameters', url: `${base}?${each(() => 'a')}&${each(() => 'b')}` },
      { variant: 'wrong-type query parameters', url: `${base}?${each((p) => (resolve(p.schema).type === 'string' ? '-1' : 'abc'))}` },
      { variant: 'lone surrogates in query parameters', url: `${base}?${each(() => LONE_QUERY)}` },
    );
  }
  calls.push({ variant: 'an unknown query parameter and __proto__', url: `${base}?__proto__[admin]=1&constructor[prototype][admin]=1` });
  if (json || form || ['POST', 'PUT', 'PATCH'].includes(op.method)) {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    calls.push(
      { variant: 'wrong types', url: base, body: wrongTypes(valid ?? {}) },
      { variant: 'a __proto__ key', url: base, rawBody: '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}' },
      { variant: 'deep nesting', url: base, rawBody: `{"a":${deep}}` },
      { variant: 'an array body', url: base, body: [valid ?? {}] },
      { variant: 'malformed JSON', url: base, rawBody: '{"a": ' },
      { variant: 'a form body', url: base, rawBody: 'a=1&a=2&__proto__[x]=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { variant: 'a text body', url: base, rawBody: 'hello', headers: { 'content-type': 'text/plain' } },
      { variant: 'an oversized body', url: base, rawBody: JSON.stringify({ padding: 'p'.repeat(11 * 1024 * 1024) }) },
    );
  }
  return calls;
}

describe('every answered status is declared (issue 22 item 5)', () => {
  it('hostile inputs to every operation answer only statuses its OpenAPI responses declare, with their content type', async () => {
    const failures: string[] = [];
    for (const op of operations()) {
      if (op.path.endsWith('/subscribe')) continue;
      clock.advance(11 * 60_000);
      for (const hostile of hostileCalls(op)) {
        const as = hostile.variant === 'anonymous' ? undefined : (hostile.as ?? owner.as);
        const res = await t.request(op.method, hostile.url, { as, headers: hostile.headers, ...(hostile.rawBody !== undefined ? { rawBody: hostile.rawBody } : hostile.body !== undefined ? { body: hostile.body } : {}) });
        if (res.status >= 500) failures.push(`${op.method} ${op.path} (${hostile.variant}): ${res.status} ${res.text.slice(0, 200)}`);
        const stray = undeclared(op, res, hostile.variant);
        if (stray) failures.push(stray);
      }
    }
    clock.advance(11 * 60_000);
    owner = await signInUser(t, owner.email);
    await t.request('POST', '/api/workspaces/fuzz/unarchive', { as: owner.as });
    expect(failures).toEqual([]);
  }, 600_000);
});
