import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readManifest, restoreBackup } from '../../src/domain/backup';
import { loadConfig } from '../../src/config';
import { createBlobStore } from '../../src/files/open-blob-store';
import { openDatabase } from '../../src/persistence/database';
import { fetchRaw, filesWorkspace, proxyUpload } from '../files/helpers';
import { startS3 } from '../helpers/s3';
import { ManualClock } from '../../src/lib/clock';
import { startTestApp } from '../helpers/app';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';
import { createWorkspace, signInUser } from '../workspaces/helpers';

/**
 * Backups as the operator runs them: `npm run admin -- backup / restore`,
 * the admin route the CLI calls while a server holds the embedded database,
 * and scheduled backups reported in /metrics and /api/health.
 */

type Run = { code: number; stdout: string; stderr: string };
type Store = { dataDir: string; databaseUrl?: string; dispose(): Promise<void> };

const TSX = path.resolve('node_modules/.bin/tsx');
const ADMIN_TOKEN = 'admin-token-for-backup-tests';
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-backup-ops-'));
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

function admin(store: { dataDir: string; databaseUrl?: string }, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: store.dataDir, ...env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  if (store.databaseUrl) childEnv.DATABASE_URL = store.databaseUrl;
  return new Promise((resolve) => {
    execFile(TSX, ['src/cli/admin.ts', ...args], { env: childEnv, timeout: 150_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

async function seed(store: Store) {
  const t = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
  try {
    const ada = await signInUser(t, 'ada@example.com');
    await createWorkspace(t, ada, { name: 'CRM', slug: 'crm' });
    expect((await t.request('POST', '/api/workspaces/crm/rows', { as: ada.as, body: { data: { title: 'kept' } } })).status).toBe(200);
  } finally {
    await t.close();
  }
}

describe('backup operations', { timeout: 240_000 }, () => {
  it('admin --help lists backup and restore', async () => {
    const run = await admin({ dataDir: tmp }, ['--help']);
    expect(run.code).toBe(0);
    for (const word of ['backup --out <file>', 'restore --from <file>', '--force', 'ADMIN_TOKEN']) expect(run.stdout).toContain(word);
  });

  it('backs up a stopped store and restores it into a fresh one; refuses a non-empty or a damaged one', async () => {
    const source = await freshDataStore();
    const target = await freshDataStore();
    try {
      await seed(source);
      const archive = path.join(tmp, 'cli.zip');
      const backup = await admin(source, ['backup', '--out', archive]);
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toContain(`Backed up to ${archive}`);

      const restore = await admin(target, ['restore', '--from', archive, '--json']);
      expect(restore.code, restore.stderr).toBe(0);
      expect(JSON.parse(restore.stdout)).toMatchObject({ emptied: false });
      const orgs = await admin(target, ['list-orgs', '--json']);
      expect(JSON.parse(orgs.stdout)).toEqual(JSON.parse((await admin(source, ['list-orgs', '--json'])).stdout));

      const again = await admin(target, ['restore', '--from', archive]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('restore: The target store is not empty');
      expect(again.stderr).toContain('--force');

      const bytes = await fs.readFile(archive);
      const damaged = path.join(tmp, 'damaged.zip');
      await fs.writeFile(damaged, bytes.subarray(0, bytes.length - 100));
      const refused = await admin(target, ['restore', '--from', damaged, '--force']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/damaged\.zip is (damaged|not a readable Trellis backup)/);

      const forced = await admin(target, ['restore', '--from', archive, '--force', '--json']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(JSON.parse(forced.stdout)).toMatchObject({ emptied: true });
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });

  it('the admin route takes a backup for ADMIN_TOKEN only', async () => {
    const t = await startTestApp({ env: { ADMIN_TOKEN } });
    try {
      expect((await t.request('POST', '/api/admin/backup')).status).toBe(401);
      const wrong = await t.request('POST', '/api/admin/backup', { as: { bearer: 'not-the-admin-token-at-all' } });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe('unauthorized');
      const res = await fetch(`${t.url}/api/admin/backup`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      const file = path.join(tmp, 'route.zip');
      await fs.writeFile(file, Buffer.from(await res.arrayBuffer()));
      expect((await readManifest(file)).source.database).toBe(t.services.database.kind);
    } finally {
      await t.close();
      await t.store.dispose();
    }
    // Without ADMIN_TOKEN on the server the route is off.
    const off = await startTestApp();
    try {
      const res = await off.request('POST', '/api/admin/backup', { as: { bearer: ADMIN_TOKEN } });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toContain('set ADMIN_TOKEN');
    } finally {
      await off.close();
      await off.store.dispose();
    }
  });

  it.skipIf(Boolean(testDatabaseUrl()))('the CLI asks a server that holds the embedded database to take the backup (PGlite only: Postgres is shared)', async () => {
    const store = await freshDataStore();
    await seed(store);
    const t = await startTestApp({ dataDir: store.dataDir, env: { ADMIN_TOKEN } });
    const pidFile = path.join(store.dataDir, 'pglite', 'postmaster.pid');
    // What a server process leaves while it runs; written here in case the in-process database does not.
    const wrote = !(await fs.stat(pidFile).catch(() => null));
    if (wrote) await fs.writeFile(pidFile, '-42\n');
    try {
      const archive = path.join(tmp, 'through-server.zip');
      const refused = await admin(store, ['backup', '--out', archive, '--server', t.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('Set ADMIN_TOKEN');
      const run = await admin(store, ['backup', '--out', archive, '--server', t.url, '--json'], { ADMIN_TOKEN });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ file: archive });
      expect(t.app.backups.status.lastSuccessAt).not.toBeNull();
      const manifest = await readManifest(archive);
      expect(manifest.tables.find((x) => x.name === 'orgs')?.rows).toBe(1);
    } finally {
      if (wrote) await fs.rm(pidFile, { force: true });
      await t.close();
      await store.dispose();
    }
  });

  it('blobs kept in S3 are backed up and restored into another bucket with their bytes', async () => {
    const from = await startS3('trellis-backup-from');
    const to = await startS3('trellis-backup-to');
    const target = await freshDataStore();
    const archive = path.join(tmp, 's3.zip');
    const bytes = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7) % 251));
    let fileUrl: string;
    try {
      const t = await startTestApp({ env: from.env });
      try {
        const files = await filesWorkspace(t, 'ada@example.com', 'drive');
        const upload = await proxyUpload(t, files.base, files.user.as, { bytes, name: 'data.bin', type: 'application/octet-stream' });
        expect(upload.status, upload.text).toBe(200);
        fileUrl = new URL(upload.body.url, t.url).pathname;
        const manifest = await t.app.backups.take(archive);
        expect(manifest.source.blobs).toBe('s3');
        expect(manifest.blobs.some((b) => b.size === bytes.length)).toBe(true);
      } finally {
        await t.close();
        await t.store.dispose();
      }
      const config = loadConfig({ DATA_DIR: target.dataDir, ...(target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : {}), ...to.env });
      const database = await openDatabase({ dataDir: target.dataDir, databaseUrl: target.databaseUrl, migrate: false });
      const blobs = await createBlobStore(config);
      try {
        await restoreBackup({ config, database, blobs }, archive);
      } finally {
        blobs.close?.();
        await database.close();
      }
      expect([...(await to.objects()).values()]).toContain(bytes.length);
      const restored = await startTestApp({ dataDir: target.dataDir, databaseUrl: target.databaseUrl, env: to.env });
      try {
        const ada = await signInUser(restored, 'ada@example.com');
        const download = await fetchRaw(restored, fileUrl, { as: ada.as });
        expect(download.status).toBe(200);
        expect(Buffer.compare(download.bytes, bytes)).toBe(0);
      } finally {
        await restored.close();
      }
    } finally {
      await target.dispose();
      await from.close();
      await to.close();
    }
  });

  it('scheduled backups keep BACKUP_KEEP archives and report success and failure in /metrics and /api/health', async () => {
    const dir = path.join(tmp, 'scheduled');
    const clock = new ManualClock(new Date('2026-11-26T10:00:00Z'));
    const t = await startTestApp({ clock, env: { BACKUP_DIR: dir, BACKUP_EVERY: '24h', BACKUP_KEEP: '2' } });
    try {
      const fresh = await t.request('GET', '/api/health');
      expect(fresh.body.backup).toEqual({ scheduled: true, lastSuccessAt: null, lastFailureAt: null });
      for (let i = 0; i < 3; i++) {
        await t.app.backups.runScheduled();
        clock.advance(24 * 3600 * 1000);
      }
      expect((await fs.readdir(dir)).sort()).toEqual(['trellis-backup-20261127T100000Z.zip', 'trellis-backup-20261128T100000Z.zip']);
      const health = await t.request('GET', '/api/health');
      expect(health.body.backup).toMatchObject({ scheduled: true, lastSuccessAt: '2026-11-28T10:00:00.000Z', lastFailureAt: null });
      const metrics = await fetch(`${t.url}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/^trellis_backup_last_success_timestamp_seconds 1795860000$/m);
      expect(metrics).toMatch(/^trellis_backup_last_failure_timestamp_seconds 0$/m);

      // A directory that cannot be written: the failure is reported, the last success kept.
      await fs.rm(dir, { recursive: true });
      await fs.writeFile(dir, 'a file where the directory was');
      await expect(t.app.backups.runScheduled()).rejects.toThrow();
      const failed = await t.request('GET', '/api/health');
      expect(failed.body.backup).toMatchObject({ lastSuccessAt: '2026-11-28T10:00:00.000Z', lastFailureAt: '2026-11-29T10:00:00.000Z' });
      expect(await fetch(`${t.url}/metrics`).then((r) => r.text())).toMatch(/^trellis_backup_last_failure_timestamp_seconds 1795946400$/m);
    } finally {
      await t.close();
      await t.store.dispose();
    }
  });
});
