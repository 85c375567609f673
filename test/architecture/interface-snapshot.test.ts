import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sortedKeys } from '../helpers/stable-json';
import { insertKey, signInUser } from '../workspaces/helpers';

/**
 * What a client sees of the interface, held to a snapshot taken before the
 * architecture move of issue 23: the whole `/openapi.json` and the MCP
 * `tools/list` result (names, titles, descriptions, input and output schemas,
 * annotations), as the server sends them over HTTP.
 *
 * Both are stored in test/architecture/snapshots/ as stable JSON: object keys
 * sorted, arrays in the order the server sends them, two-space indent, one
 * trailing newline. The live documents must serialise to the same bytes.
 *
 * Normalised, because they vary between runs or deployments, and nothing else:
 * - `servers[].url` of the OpenAPI document becomes `<public-url>`: it is the
 *   configured PUBLIC_URL (today `http://localhost:0` in tests, as swagger is
 *   registered before the server listens), not part of the interface;
 * - any other occurrence of the test server's own URL
 *   (`http://127.0.0.1:<random port>`) becomes `<public-url>` too.
 * The API version is a constant in src/http/openapi.ts, not read from the
 * environment, so it stays as it is. Nothing else differs between runs, or
 * between PGlite and Postgres.
 *
 * A change the move did not mean to make fails with the first differing
 * paths. A change that is meant (a route was wrong) is taken explicitly:
 *
 *   UPDATE_INTERFACE_SNAPSHOT=1 npx vitest run test/architecture/interface-snapshot.test.ts
 *
 * rewrites both files; commit them with the change that explains them.
 */

const SNAPSHOTS = path.join(import.meta.dirname, 'snapshots');
const UPDATE = process.env.UPDATE_INTERFACE_SNAPSHOT === '1';
const PUBLIC_URL = '<public-url>';
const MAX_DIFFERENCES = 15;

let t: Awaited<ReturnType<typeof startTestApp>>;
let bearer: string;

beforeAll(async () => {
  t = await startTestApp();
  const owner = await signInUser(t, 'snapshot-owner@example.com');
  const key = await insertKey(t, owner, { role: 'editor', agentName: 'snapshot' });
  bearer = (key.as as { bearer: string }).bearer;
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

const serialise = (value: unknown) => `${JSON.stringify(sortedKeys(value), null, 2)}\n`;

function normalise(value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(value).split(t.url).join(PUBLIC_URL)) as { servers?: Array<{ url?: string }> };
  for (const server of copy.servers ?? []) if (server.url !== undefined) server.url = PUBLIC_URL;
  return copy;
}

/** The first differing JSON paths, each with both sides cut short. */
function differences(expected: unknown, actual: unknown, at = '$', found: string[] = []): string[] {
  if (found.length >= MAX_DIFFERENCES) return found;
  const show = (value: unknown) => {
    const text = value === undefined ? '(absent)' : JSON.stringify(value);
    return text.length > 160 ? `${text.slice(0, 157)}...` : text;
  };
  const bothObjects = expected && actual && typeof expected === 'object' && typeof actual === 'object' && Array.isArray(expected) === Array.isArray(actual);
  if (!bothObjects) {
    if (JSON.stringify(expected) !== JSON.stringify(actual)) found.push(`${at}\n    snapshot: ${show(expected)}\n    live:     ${show(actual)}`);
    return found;
  }
  const names = (list: unknown) => (Array.isArray(list) && list.every((item) => typeof item?.name === 'string') ? list.map((item) => item.name as string) : null);
  const [expectedNames, actualNames] = [names(expected), names(actual)];
  if (expectedNames && actualNames && expectedNames.join('\n') !== actualNames.join('\n')) {
    // A tool or parameter added, dropped or moved: say which, rather than every index after it.
    found.push(`${at} names\n    snapshot: ${show(expectedNames)}\n    live:     ${show(actualNames)}`);
    const missing = expectedNames.filter((n) => !actualNames.includes(n)), extra = actualNames.filter((n) => !expectedNames.includes(n));
    if (missing.length || extra.length) found.push(`${at}\n    only in snapshot: ${show(missing)}\n    only live:        ${show(extra)}`);
    else found.push(`${at}\n    same names in another order`);
    return found;
  }
  const [e, a] = [expected as Record<string, unknown>, actual as Record<string, unknown>];
  const keys = Array.isArray(e) ? [...Array(Math.max(e.length, (a as unknown as unknown[]).length)).keys()].map(String) : [...new Set([...Object.keys(e), ...Object.keys(a)])].sort();
  for (const key of keys) {
    // Tools and parameters are easier to find by name than by index.
    const named = Array.isArray(e) ? ((e[Number(key)] ?? a[key]) as { name?: unknown } | undefined)?.name : undefined;
    const step = Array.isArray(e) ? `[${key}${typeof named === 'string' ? ` name=${named}` : ''}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    differences(e[key], a[key], at + step, found);
  }
  return found;
}

async function compare(file: string, live: unknown) {
  const target = path.join(SNAPSHOTS, file);
  const text = serialise(normalise(live));
  if (UPDATE) {
    fs.mkdirSync(SNAPSHOTS, { recursive: true });
    fs.writeFileSync(target, text);
    return;
  }
  expect(fs.existsSync(target), `${target} is missing: run UPDATE_INTERFACE_SNAPSHOT=1 npx vitest run test/architecture/interface-snapshot.test.ts`).toBe(true);
  const stored = fs.readFileSync(target, 'utf8');
  if (stored === text) return;
  const paths = differences(JSON.parse(stored), JSON.parse(text));
  const message =
    `\n${file} differs from what the server now sends. First differing paths:\n  ${paths.join('\n  ') || '(none: the file is not in the stable form; regenerate it)'}\n\n` +
    'If the change is meant, regenerate with UPDATE_INTERFACE_SNAPSHOT=1 npx vitest run test/architecture/interface-snapshot.test.ts and commit the file with it.\n';
  expect.fail(message);
}

describe('the interface a client sees (issue 23 snapshot)', () => {
  it('serves the same /openapi.json as the snapshot', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    await compare('openapi.json', res.body);
  });

  it('lists the same MCP tools as the snapshot', async () => {
    const res = await t.request('POST', '/api/mcp', {
      as: { bearer },
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result?.tools?.length, res.text).toBeGreaterThan(0);
    await compare('mcp-tools.json', res.body.result);
  });
});
