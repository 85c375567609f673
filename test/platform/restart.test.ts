import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDataStore } from '../helpers/database';
import { startServerProcess, type ServerProcess } from '../helpers/server-process';

/**
 * The real server (`src/main.ts`, as `npm start` runs it) stops gracefully on
 * SIGTERM, and a new process on the same DATA_DIR (or DATABASE_URL) keeps
 * every user, session, workspace and pending sign-in link.
 * test/sync/crash.test.ts covers the hard stop (SIGKILL) for acknowledged writes.
 */

let store: Awaited<ReturnType<typeof freshDataStore>>;
const running: ServerProcess[] = [];

beforeAll(async () => {
  store = await freshDataStore();
});
afterAll(async () => {
  for (const server of running) await server.kill('SIGKILL');
  await store.dispose();
});

async function start(): Promise<ServerProcess> {
  const server = await startServerProcess({
    DATA_DIR: store.dataDir,
    // Empty values are unset: mail goes to the outbox, and PGlite is used unless the store is a Postgres database.
    DATABASE_URL: store.databaseUrl ?? '',
    SMTP_URL: '',
    REDIS_URL: '',
  });
  running.push(server);
  return server;
}

/** SIGTERM, then the exit code and how long the process took to go. */
async function stopGracefully(server: ServerProcess): Promise<{ code: number | null; ms: number }> {
  const startedAt = Date.now();
  const code = await server.kill('SIGTERM');
  running.splice(running.indexOf(server), 1);
  return { code, ms: Date.now() - startedAt };
}

async function call(server: ServerProcess, method: string, urlPath: string, options: { cookie?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (options.cookie) headers.cookie = `svc-session=${options.cookie}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(server.url + urlPath, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    redirect: 'manual',
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Asks for a magic link and reads its token from DATA_DIR/outbox.jsonl. */
async function mailedToken(server: ServerProcess, email: string): Promise<string> {
  expect((await call(server, 'POST', '/api/auth', { body: { email } })).status).toBe(200);
  const lines = (await fs.readFile(path.join(store.dataDir, 'outbox.jsonl'), 'utf8')).trim().split('\n');
  const mail = lines.map((line) => JSON.parse(line) as { to: string; text: string }).filter((m) => m.to === email).at(-1);
  const token = /token=([A-Za-z0-9_-]+)/.exec(mail?.text ?? '')?.[1];
  if (!token) throw new Error(`no magic link for ${email} in the outbox`);
  return token;
}

async function redeem(server: ServerProcess, token: string) {
  const res = await fetch(`${server.url}/api/auth?token=${token}`, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), cookie: /svc-session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] };
}

describe('restart on the same data', () => {
  it('stops on SIGTERM with exit code 0 and keeps users, sessions, workspaces and pending links', async () => {
    let server = await start();

    const first = await redeem(server, await mailedToken(server, 'restart@example.com'));
    expect(first.status).toBe(302);
    expect(first.location).toBe('/restart/welcome');
    const cookie = first.cookie!;
    expect(cookie).toBeTruthy();
    const usedToken = await mailedToken(server, 'restart@example.com');
    expect((await redeem(server, usedToken)).status).toBe(302);
    const pendingToken = await mailedToken(server, 'later@example.com');

    expect((await call(server, 'PATCH', '/api/me', { cookie, body: { name: 'Restart Tester' } })).status).toBe(200);
    expect((await call(server, 'PATCH', '/api/me/org', { cookie, body: { defaultWorkspaceVisibility: 'org' } })).status).toBe(200);
    const created = await call(server, 'POST', '/api/workspaces', { cookie, body: { name: 'Survivor', slug: 'survivor', mode: 'doc' } });
    expect(created.status).toBe(200);
    const before = {
      me: (await call(server, 'GET', '/api/me', { cookie })).body,
      org: (await call(server, 'GET', '/api/me/org', { cookie })).body,
      workspaces: (await call(server, 'GET', '/api/workspaces', { cookie })).body,
    };
    expect(before.workspaces.workspaces.map((w: { slug: string }) => w.slug).sort()).toEqual(['survivor', 'welcome']);

    const stopped = await stopGracefully(server);
    expect(stopped.code, `exit code after SIGTERM; output:\n${server.output()}`).toBe(0);
    expect(stopped.ms).toBeLessThan(5_000);
    await expect(fetch(`${server.url}/api/health`)).rejects.toThrow();

    server = await start();
    const me = await call(server, 'GET', '/api/me', { cookie });
    expect(me.status).toBe(200);
    expect(me.body).toEqual(before.me);
    expect(me.body).toMatchObject({ user: { email: 'restart@example.com', name: 'Restart Tester' }, org: { slug: 'restart' } });
    expect((await call(server, 'GET', '/api/me/org', { cookie })).body).toEqual(before.org);
    const workspaces = await call(server, 'GET', '/api/workspaces', { cookie });
    expect(workspaces.status).toBe(200);
    expect(workspaces.body).toEqual(before.workspaces);
    const survivor = await call(server, 'GET', '/api/workspaces/survivor', { cookie });
    expect(survivor.status).toBe(200);
    expect(survivor.body).toMatchObject({ id: created.body.id, slug: 'survivor', name: 'Survivor', mode: 'doc', visibility: 'org' });

    // Sign-in state survived too: a link mailed before the restart still works once, a used one still does not.
    const later = await redeem(server, pendingToken);
    expect(later.status).toBe(302);
    expect(later.location).toBe('/later/welcome');
    expect((await redeem(server, usedToken)).status).toBe(401);
    // Signing out still reaches the sessions made before the restart.
    expect((await call(server, 'DELETE', '/api/me/sessions', { cookie })).body).toEqual({ revokedSessions: 2 });
    expect((await call(server, 'GET', '/api/me', { cookie })).status).toBe(401);

    const again = await stopGracefully(server);
    expect(again.code, `exit code after SIGTERM; output:\n${server.output()}`).toBe(0);
    expect(again.ms).toBeLessThan(5_000);
  }, 120_000);
});
