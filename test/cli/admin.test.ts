import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { freshDataStore } from '../helpers/database';

/** The admin CLI as a self-hoster runs it: a child process on a real data store. */

type Run = { code: number; stdout: string; stderr: string };

const TSX = path.resolve('node_modules/.bin/tsx');

let store: Awaited<ReturnType<typeof freshDataStore>>;

beforeAll(async () => {
  store = await freshDataStore();
});
afterAll(async () => {
  await store?.dispose();
});

function admin(...args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: store.dataDir };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  if (store.databaseUrl) env.DATABASE_URL = store.databaseUrl;
  return new Promise((resolve) => {
    // What `npx tsx` would run, without starting npm for every call.
    execFile(TSX, ['src/cli/admin.ts', ...args], { env, timeout: 110_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function orgs(): Promise<Array<{ slug: string; name: string; plan: string; members: number }>> {
  const run = await admin('list-orgs', '--json');
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

// Each run is a fresh process that loads the app's modules: allow for a busy machine.
describe('admin CLI', { timeout: 120_000 }, () => {
  it('prints help and exits 0', async () => {
    for (const run of await Promise.all([admin('--help'), admin('help')])) {
      expect(run.code).toBe(0);
      for (const command of ['create-user', 'set-plan', 'list-orgs', 'mint-key', '--email', '--org', '--plan', '--scope']) {
        expect(run.stdout).toContain(command);
      }
    }
  });

  it('creates a user with an organisation, idempotently, and lists it', async () => {
    const created = await admin('create-user', '--email', 'Ada@Example.com', '--org', 'Analytical Engines', '--name', 'Ada');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Created user ada@example.com');
    const userId = /user_id\s+(usr_\S+)/.exec(created.stdout)?.[1];
    expect(userId).toBeDefined();
    expect(created.stdout).toMatch(/org_slug\s+analytical-engines/);

    const again = await admin('create-user', '--email', 'ada@example.com', '--org', 'Something Else', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ userId, orgSlug: 'analytical-engines', created: false });

    const table = await admin('list-orgs');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^slug\s+name\s+plan\s+members$/m);
    expect(table.stdout).toMatch(/^analytical-engines\s+Analytical Engines\s+free\s+1$/m);
  });

  it("sets an organisation's plan", async () => {
    const run = await admin('set-plan', '--org', 'analytical-engines', '--plan', 'pro');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('free -> pro');
    expect(await orgs()).toEqual([{ slug: 'analytical-engines', name: 'Analytical Engines', plan: 'pro', members: 1 }]);
  });

  it('rejects a bad plan, a missing flag and an unknown command with exit 2', async () => {
    // Usage errors are caught before the database is opened, so these may run side by side.
    const [badPlan, missing, unknownFlag, unknown] = await Promise.all([
      admin('set-plan', '--org', 'analytical-engines', '--plan', 'gold'),
      admin('set-plan', '--org', 'analytical-engines'),
      admin('list-orgs', '--colour'),
      admin('drop-everything'),
    ]);
    expect(badPlan.code).toBe(2);
    expect(badPlan.stderr).toContain('--plan: "gold" is not one of free, pro, scale');

    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('missing --plan');

    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain('--colour');

    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command "drop-everything"');
  });

  it('mints a key the API accepts', async () => {
    const minted = await admin('mint-key', '--email', 'ada@example.com', '--name', 'ci', '--agent', 'Babbage', '--role', 'viewer', '--scope', 'welcome', '--json');
    expect(minted.code, minted.stderr).toBe(0);
    const { key, secret } = JSON.parse(minted.stdout);
    expect(secret).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ name: 'ci', agentName: 'Babbage', role: 'viewer', scopeSlug: 'welcome' });

    const badRole = await admin('mint-key', '--email', 'ada@example.com', '--name', 'x', '--agent', 'Babbage', '--role', 'owner');
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role: "owner" is not one of editor, commenter, viewer');

    // The server opens the store only after the CLI has exited: PGlite is single-process.
    const t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
    try {
      const me = await t.request('GET', '/api/me', { as: { bearer: secret } });
      expect(me.status, me.text).toBe(200);
      expect(me.body.agent).toMatchObject({ name: 'Babbage', keyId: key.id, role: 'viewer' });
      expect(me.body.org.slug).toBe('analytical-engines');
    } finally {
      await t.close();
    }
  });

  it('fails with exit 1 for an unknown organisation', async () => {
    const run = await admin('set-plan', '--org', 'no-such-org', '--plan', 'scale');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No organisation with the slug "no-such-org"');
  });

  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))('refuses an embedded database that a server holds open', async () => {
    const pidFile = path.join(store.dataDir, 'pglite', 'postmaster.pid');
    await fs.writeFile(pidFile, '-42\n');
    try {
      const run = await admin('list-orgs');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('Stop the Trellis server first');
    } finally {
      await fs.rm(pidFile, { force: true });
    }
  });
});
