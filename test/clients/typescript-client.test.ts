import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTrellisClient, type TrellisClient } from '../../clients/typescript/src/index';
import { openDoc, openTable } from '../../clients/typescript/src/sync';
import { ManualClock } from '../../src/lib/clock';
import { startTestApp } from '../helpers/app';
import { sortedKeys } from '../helpers/stable-json';
import { eventually } from '../helpers/sync';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * The typed client in clients/typescript (issue 27 item 3), used the way an
 * agent author would: against the real server, with an agent's API key.
 */

const CLIENT = path.join(import.meta.dirname, '../../clients/typescript');
let t: Awaited<ReturnType<typeof startTestApp>>;
let clock: ManualClock;
let ada: TestUser;
let apiKey: string;
let client: TrellisClient;

beforeAll(async () => {
  clock = new ManualClock(new Date('2027-03-01T09:00:00Z'));
  t = await startTestApp({ clock });
  ada = await signInUser(t, 'ada@example.com');
  const workspace = await createWorkspace(t, ada, { name: 'Bugs', slug: 'bugs', mode: 'table' });
  await createWorkspace(t, ada, { name: 'Notes', slug: 'notes', mode: 'doc' });
  const key = await insertKey(t, ada, { role: 'editor', agentName: 'triage-bot' });
  apiKey = (key.as as { bearer: string }).bearer;
  void workspace;
  client = createTrellisClient({ baseUrl: t.url, apiKey, sleep: async (ms) => clock.advance(ms) });
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('the typed client', () => {
  it('has the types of the /openapi.json the server serves (they cannot drift)', async () => {
    const live = await t.request('GET', '/openapi.json');
    // Generated from the spec with its keys sorted, as the interface snapshot stores it (npm run client:generate).
    const generated = astToString(await openapiTS(sortedKeys(live.body) as never));
    const committed = fs.readFileSync(path.join(CLIENT, 'src/schema.ts'), 'utf8');
    // The committed file is the CLI's output: its header comment, then the same declarations.
    expect(committed.slice(committed.indexOf('export '))).toBe(generated.slice(generated.indexOf('export ')));
  }, 60_000);

  it('runs what an agent does: columns, rows, a filtered read over pages, a comment, and the events of it all', async () => {
    const seen: string[] = [];
    const abort = new AbortController();
    const watching = (async () => {
      for await (const event of client.events('bugs', { signal: abort.signal })) seen.push(`${event.event}:${event.data.eventId}`);
    })();

    try {
    for (const column of [
      { key: 'severity', label: 'Severity', type: 'select' as const, options: [{ value: 'high', label: 'High' }, { value: 'low', label: 'Low' }] },
    ]) {
      const { error } = await client.POST('/api/workspaces/{slug}/columns', { params: { path: { slug: 'bugs' } }, body: { column } as never });
      expect(error, JSON.stringify(error)).toBeUndefined();
    }
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const { data, error } = await client.POST('/api/workspaces/{slug}/rows', {
        params: { path: { slug: 'bugs' } },
        body: { data: { title: `bug ${i}`, severity: i % 2 === 0 ? 'high' : 'low' } },
      });
      expect(error).toBeUndefined();
      ids.push((data as { id: string }).id);
    }

    const open: string[] = [];
    for await (const row of client.rows('bugs', { filter: { severity: { eq: 'high' } }, sort: '-title', limit: 2 })) open.push(String(row.data.title));
    expect(open).toEqual(['bug 6', 'bug 4', 'bug 2', 'bug 0']);

    const { data: comment, error } = await client.POST('/api/workspaces/{slug}/comments', {
      params: { path: { slug: 'bugs' } },
      body: { body: 'Looking at this one.', target: { type: 'row', rowId: ids[0] } },
    });
    expect(error).toBeUndefined();
    expect(comment?.body).toBe('Looking at this one.');

    await eventually(() => seen.some((s) => s.startsWith('comment.added')), 10_000).catch(() => expect.fail(`events seen: ${seen.join(', ')}`));
    expect(seen.filter((s) => s.startsWith('row.created')).length).toBe(7);
    } finally {
      abort.abort();
      await watching.catch(() => {});
    }
  });

  it('answers an error of the documented shape as a typed result, not an exception', async () => {
    const { data, error, response } = await client.GET('/api/workspaces/{slug}/rows/{id}', { params: { path: { slug: 'bugs', id: 'row_missing' } } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error).toEqual({ error: { code: 'not_found', message: expect.any(String) }, requestId: expect.any(String) });
    const stranger = createTrellisClient({ baseUrl: t.url, apiKey: 'svc_live_not_a_key' });
    const refused = await stranger.GET('/api/workspaces/{slug}/rows', { params: { path: { slug: 'bugs' } } });
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('waits out a 429 for its Retry-After and sends the request again', async () => {
    const waits: number[] = [];
    const patient = createTrellisClient({
      baseUrl: t.url,
      apiKey,
      sleep: async (ms) => {
        waits.push(ms);
        clock.advance(ms);
      },
    });
    // The key's writes run out at 300 a minute (docs/LIMITS.md); the 301st is answered 429 and retried after the window.
    const statuses: number[] = [];
    for (let batch = 0; batch < 31; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => patient.POST('/api/workspaces/{slug}/rows', { params: { path: { slug: 'bugs' } }, body: { data: { title: 'load' } } })),
      );
      statuses.push(...answers.map((a) => a.response.status));
    }
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((ms) => ms > 0 && ms <= 60_000)).toBe(true);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 120_000);

  it('builds on its own into a package whose entry points work (npm run build in clients/typescript)', async () => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: CLIENT, stdio: 'pipe' });
    const manifest = JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8'));
    for (const entry of Object.values(manifest.exports) as Array<{ types: string; import: string }>) {
      expect(fs.existsSync(path.join(CLIENT, entry.types)), entry.types).toBe(true);
      expect(fs.existsSync(path.join(CLIENT, entry.import)), entry.import).toBe(true);
    }
    const built = await import(path.join(CLIENT, manifest.exports['.'].import));
    const fromPackage = built.createTrellisClient({ baseUrl: t.url, apiKey }) as TrellisClient;
    const { data, error } = await fromPackage.GET('/api/workspaces/{slug}/rows', { params: { path: { slug: 'bugs' }, query: { limit: 1 } } });
    expect(error).toBeUndefined();
    expect(data?.rows).toHaveLength(1);
  }, 120_000);

  it('opens a table as live typed rows and a doc as Markdown over sync', async () => {
    const table = await openTable(client, { baseUrl: t.url, apiKey, workspace: 'bugs', surface: 'table', WebSocket });
    const before = table.rows().length;
    const { data } = await client.POST('/api/workspaces/{slug}/rows', { params: { path: { slug: 'bugs' } }, body: { data: { title: 'seen live' } } });
    await eventually(() => table.rows().some((row) => row.id === (data as { id: string }).id && row.data.title === 'seen live'));
    expect(table.rows().length).toBe(before + 1);
    await table.saved();
    table.close();

    const put = await client.PUT('/api/workspaces/{slug}/doc', { params: { path: { slug: 'notes' } }, body: { markdown: '# Plan\n\nWrite the *spec*.\n' } as never });
    expect(put.error).toBeUndefined();
    const doc = await openDoc(client, { baseUrl: t.url, apiKey, workspace: 'notes', surface: 'doc', WebSocket });
    expect(doc.markdown()).toBe('# Plan\n\nWrite the *spec*.\n');
    doc.close();
  });
});
