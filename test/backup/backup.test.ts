import { sql } from 'kysely';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { BackupArchiveError, createBackup, restoreBackup, RestoreRefusedError, type BackupManifest } from '../../src/domain/backup';
import { LocalBlobStore } from '../../src/files/blob-store';
import { rowsRoot } from '../../src/model/table/layout';
import { appliedMigrations, countRows } from '../../src/persistence/backup';
import { openDatabase } from '../../src/persistence/database';
import { startTestApp, type TestApp } from '../helpers/app';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';
import { connectClient, synced } from '../helpers/sync';
import { filesWorkspace, fetchRaw, proxyUpload } from '../files/helpers';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Backups as an operator relies on them: taken while writers keep going,
 * restored into a fresh store as exactly the state at the backup point,
 * across the embedded database and Postgres, and refused when damaged.
 */

type Store = { dataDir: string; databaseUrl?: string; dispose(): Promise<void> };

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-backup-test-'));
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

/** Restores `archive` into `store` as the CLI does: its database opened unmigrated, its local blobs. */
async function restoreInto(store: { dataDir: string; databaseUrl?: string }, archive: string, options: { force?: boolean } = {}) {
  const database = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, migrate: false });
  try {
    return await restoreBackup({ config: { dataDir: store.dataDir, webhookSecretKey: undefined }, database, blobs: new LocalBlobStore(path.join(store.dataDir, 'blobs')) }, archive, options);
  } finally {
    await database.close();
  }
}

async function backupOf(t: TestApp, file: string): Promise<BackupManifest> {
  return createBackup({ config: t.services.config, database: t.services.database, blobs: t.services.blobs }, file);
}

/** The rows of every table in an archive, as sorted JSON lines (the logical contents). */
async function archiveContents(file: string): Promise<Record<string, string[]>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false });
  const out: Record<string, string[]> = {};
  try {
    for await (const entry of zip.eachEntry()) {
      const match = /^db\/\d+-(.+)\.jsonl$/.exec(entry.fileName);
      if (!match) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      out[match[1]!] = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean).sort();
    }
  } finally {
    zip.close();
  }
  return out;
}

/** Rows of the table surface as its Y document holds them, read over sync. */
async function documentRows(t: TestApp, documentName: string, token: string): Promise<Map<string, unknown>> {
  const client = connectClient(t.url, documentName, { token });
  try {
    await synced(client, 15_000);
    const rows = new Map<string, unknown>();
    for (const [id, row] of rowsRoot(client.doc).entries()) rows.set(id, row.get('title'));
    return rows;
  } finally {
    client.destroy();
  }
}

async function projectedRows(t: TestApp, workspaceId: string): Promise<Map<string, unknown>> {
  const rows = await t.services.db.selectFrom('tableRows').select(['id', 'data']).where('workspaceId', '=', workspaceId).execute();
  return new Map(rows.map((r) => [r.id, (r.data as Record<string, unknown>).title]));
}

describe('backup and restore', { timeout: 180_000 }, () => {
  let source: Awaited<ReturnType<typeof startTestApp>>;
  let ada: TestUser;
  let table: { id: string; slug: string; documentName: string };
  let doc: { id: string; base: string };
  let key: string;
  let fileUrl: string;
  let fileBytes: Buffer;
  let archive: string;
  let manifest: BackupManifest;
  const before: string[] = [];
  const after: string[] = [];
  const inFlight: string[] = [];

  beforeAll(async () => {
    source = await startTestApp();
    ada = await signInUser(source, 'ada@example.com');
    const ws = await createWorkspace(source, ada, { name: 'CRM', slug: 'crm', mode: 'table' });
    table = { id: ws.id, slug: 'crm', documentName: ws.primarySurface.syncDocument };
    const notes = await createWorkspace(source, ada, { name: 'Notes', slug: 'notes', mode: 'doc', initialMarkdown: '# Plan\n\nFirst draft.\n' });
    doc = { id: notes.id, base: '/api/workspaces/notes' };
    const agent = await insertKey(source, ada, { role: 'editor', agentName: 'scribe' });
    key = (agent.as as { bearer: string }).bearer;
    const first = await source.request('POST', '/api/workspaces/crm/rows', { as: agent.as, body: { data: { title: 'seed' } } });
    expect(first.status, first.text).toBe(200);
    expect((await source.request('POST', '/api/workspaces/crm/comments', { as: ada.as, body: { target: { type: 'row', rowId: first.body.id }, body: 'Check this one' } })).status).toBe(200);
    expect((await source.request('PUT', `${doc.base}/doc`, { as: ada.as, body: { markdown: '# Plan\n\nSecond draft.\n' } })).status).toBe(200);
    expect((await source.request('POST', `${doc.base}/surfaces/doc/versions`, { as: ada.as, body: { name: 'Second draft' } })).status).toBe(200);
    const files = await filesWorkspace(source, 'ada@example.com', 'drive');
    fileBytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
    const upload = await proxyUpload(source, files.base, ada.as, { bytes: fileBytes, name: 'data.bin', type: 'application/octet-stream' });
    expect(upload.status, upload.text).toBe(200);
    fileUrl = new URL(upload.body.url, source.url).pathname;

    // A writer keeps going: rows and doc edits, one after another, while the backup is taken.
    archive = path.join(tmp, 'live.zip');
    let phase = 'before' as 'before' | 'during' | 'after';
    let stop = false;
    let n = 0;
    const writer = (async () => {
      while (!stop) {
        const title = `w-${n++}`;
        const started = phase;
        const res = await source.request('POST', '/api/workspaces/crm/rows', { as: { bearer: key }, body: { data: { title } } });
        expect(res.status, res.text).toBe(200);
        await source.request('PUT', `${doc.base}/doc`, { as: ada.as, body: { markdown: `# Plan\n\nDraft ${title}.\n` } });
        const ended = phase;
        if (started === 'before' && ended === 'before') before.push(title);
        else if (started === 'after') after.push(title);
        else inFlight.push(title);
      }
    })();
    while (before.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    phase = 'during';
    manifest = await backupOf(source, archive);
    phase = 'after';
    while (after.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    stop = true;
    await writer;
  });

  afterAll(async () => {
    await source?.close();
    await source?.store.dispose();
  });

  it('restores into a fresh store exactly the state at the backup point, nothing torn', async () => {
    expect(manifest.tables.find((t) => t.name === 'files')?.rows).toBe(1);
    expect(manifest.blobs.length).toBeGreaterThanOrEqual(1);
    const store = await freshDataStore();
    try {
      const result = await restoreInto(store, archive);
      expect(result.rows).toBe(manifest.tables.reduce((sum, t) => sum + t.rows, 0));
      const restored = await startTestApp({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
      try {
        // Every table holds what the manifest counted.
        const counts = await countRows(restored.services.db);
        // The restored server numbered itself as a sync instance: one row more, and a number never handed out before the backup.
        for (const t of manifest.tables) expect(counts[t.name], t.name).toBe(t.name === 'sync_instances' ? t.rows + 1 : t.rows);
        const instances = (await sql<{ number: number }>`select number from sync_instances order by started_at, number`.execute(restored.services.db)).rows;
        expect(instances.at(-1)!.number).toBe(Math.max(...instances.map((i) => i.number)));

        // Rows: everything written before the backup, nothing written after, and the document agrees with its projection.
        const rows = await projectedRows(restored, table.id);
        const titles = new Set(rows.values());
        for (const title of ['seed', ...before]) expect(titles.has(title), title).toBe(true);
        for (const title of after) expect(titles.has(title), title).toBe(false);
        expect([...titles].filter((t) => !['seed', ...before, ...inFlight].includes(String(t)))).toEqual([]);
        // The writer wrote one row at a time: a consistent snapshot holds a prefix of its rows, no gap.
        const written = [...titles].filter((t) => String(t).startsWith('w-')).map((t) => Number(String(t).slice(2))).sort((a, b) => a - b);
        expect(written).toEqual(written.map((_, i) => i));
        expect(await documentRows(restored, table.documentName, key)).toEqual(rows);

        // The key still works; the REST listing is the same rows.
        const listed = await restored.request('GET', '/api/workspaces/crm/rows?limit=500', { as: { bearer: key } });
        expect(listed.status, listed.text).toBe(200);
        expect(new Set(listed.body.rows.map((r: any) => r.data.title))).toEqual(titles);

        // The comment, the doc (some draft of the writer's or earlier), its named version.
        const comments = await restored.request('GET', '/api/workspaces/crm/comments', { as: { bearer: key } });
        expect(comments.status, comments.text).toBe(200);
        expect(JSON.stringify(comments.body)).toContain('Check this one');
        const markdown = await restored.request('GET', `${doc.base}/doc?format=markdown`, { as: { bearer: key } });
        expect(markdown.status, markdown.text).toBe(200);
        expect(markdown.body.markdown).toMatch(/^# Plan\n\n(Second draft|Draft w-\d+)\.\n$/);
        const drafted = /Draft (w-\d+)/.exec(markdown.body.markdown)?.[1];
        if (drafted) expect(after).not.toContain(drafted);
        const versions = await restored.request('GET', `${doc.base}/surfaces/doc/versions`, { as: { bearer: key } });
        expect(versions.status, versions.text).toBe(200);
        expect(versions.body.versions.map((v: any) => v.name)).toContain('Second draft');

        // The file with its bytes.
        // Sessions are restored too, so Ada's cookie still works.
        const download = await fetchRaw(restored, fileUrl, { as: ada.as });
        expect(download.status).toBe(200);
        expect(Buffer.compare(download.bytes, fileBytes)).toBe(0);

        // The key that seals webhook secrets came along, so they still open.
        expect(manifest.webhookSecretKey).toBe('webhook-secret.key');
        expect(await fs.readFile(path.join(store.dataDir, 'webhook-secret.key'), 'utf8')).toBe(await fs.readFile(path.join(source.dataDir, 'webhook-secret.key'), 'utf8'));

        // New writes take fresh identities after the loaded ones.
        const next = await restored.request('POST', '/api/workspaces/crm/rows', { as: { bearer: key }, body: { data: { title: 'after restore' } } });
        expect(next.status, next.text).toBe(200);
      } finally {
        await restored.close();
      }
    } finally {
      await store.dispose();
    }
  });

  it('refuses a corrupt or truncated archive with a clear message, changing nothing', async () => {
    const bytes = await fs.readFile(archive);
    const flipped = Buffer.from(bytes);
    // A byte in the middle of the largest table's stored data (a byte of a header field such as an
    // entry's modification time would change nothing a restore reads).
    flipped[await offsetInsideLargestTable(archive, bytes)]! ^= 0xff;
    const corrupt = path.join(tmp, 'corrupt.zip');
    await fs.writeFile(corrupt, flipped);
    const truncated = path.join(tmp, 'truncated.zip');
    await fs.writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));

    const store = await freshDataStore();
    try {
      const database = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, migrate: false });
      const migrationsBefore = await appliedMigrations(database.db);
      await database.close();
      await expect(restoreInto(store, corrupt)).rejects.toThrow(BackupArchiveError);
      await expect(restoreInto(store, corrupt)).rejects.toThrow(/corrupt\.zip is (damaged|not a readable Trellis backup)/);
      await expect(restoreInto(store, truncated)).rejects.toThrow(/truncated\.zip is (damaged|not a readable Trellis backup)/);
      const check = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl, migrate: false });
      try {
        expect(await appliedMigrations(check.db)).toEqual(migrationsBefore);
        expect(Object.values(await countRows(check.db)).every((n) => n === 0)).toBe(true);
      } finally {
        await check.close();
      }
      expect(await fs.readdir(path.join(store.dataDir, 'blobs')).catch(() => [])).toEqual([]);
    } finally {
      await store.dispose();
    }
  });

  it('refuses a store that is not empty unless forced, which empties it first', async () => {
    const store = await freshDataStore();
    try {
      await restoreInto(store, archive);
      await expect(restoreInto(store, archive)).rejects.toThrow(RestoreRefusedError);
      await expect(restoreInto(store, archive)).rejects.toThrow(/not empty .*--force/);
      const forced = await restoreInto(store, archive, { force: true });
      expect(forced.emptied).toBe(true);
      const check = await openDatabase({ dataDir: store.dataDir, databaseUrl: store.databaseUrl });
      try {
        const counts = await countRows(check.db);
        for (const t of manifest.tables) expect(counts[t.name], t.name).toBe(t.rows);
      } finally {
        await check.close();
      }
    } finally {
      await store.dispose();
    }
  });

  it('a blob that cannot be read fails the backup and leaves no archive', async () => {
    const out = path.join(tmp, 'failed.zip');
    const blobs = Object.create(source.services.blobs) as typeof source.services.blobs;
    blobs.get = async (blobKey) => {
      const stored = await source.services.blobs.get(blobKey);
      if (!stored) return null;
      stored.body.destroy();
      const broken = new Readable({ read() { this.destroy(new Error('disk read error')); } });
      return { ...stored, body: broken };
    };
    await expect(createBackup({ config: source.services.config, database: source.services.database, blobs }, out)).rejects.toThrow('disk read error');
    expect((await fs.readdir(tmp)).filter((name) => name.startsWith('failed.zip'))).toEqual([]);
  });

  it.skipIf(!testDatabaseUrl())('moves from the embedded database to Postgres and back with the same contents (needs TEST_DATABASE_URL)', async () => {
    const url = testDatabaseUrl()!;
    // The source above runs on whichever database the run uses; take a PGlite one whatever it is.
    const pgliteDir = path.join(tmp, 'pglite-source');
    let embedded = archive;
    if (source.services.database.kind !== 'pglite') {
      embedded = path.join(tmp, 'embedded.zip');
      await restoreInto({ dataDir: pgliteDir }, archive);
      const database = await openDatabase({ dataDir: pgliteDir });
      try {
        await createBackup({ config: { dataDir: pgliteDir, webhookSecretKey: undefined }, database, blobs: new LocalBlobStore(path.join(pgliteDir, 'blobs')) }, embedded);
      } finally {
        await database.close();
      }
    }
    // Onto an empty Postgres database, never migrated: it is brought to the archive's schema first.
    const name = `trellis_backup_${path.basename(tmp).replace(/[^a-z0-9]/gi, '').toLowerCase()}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const target = new URL(url);
    target.pathname = `/${name}`;
    const pgStore = { dataDir: path.join(tmp, 'pg-target'), databaseUrl: target.toString() };
    try {
      await restoreInto(pgStore, embedded);
      const onPostgres = path.join(tmp, 'from-postgres.zip');
      const database = await openDatabase(pgStore);
      try {
        expect(database.kind).toBe('postgres');
        await createBackup({ config: { dataDir: pgStore.dataDir, webhookSecretKey: undefined }, database, blobs: new LocalBlobStore(path.join(pgStore.dataDir, 'blobs')) }, onPostgres);
      } finally {
        await database.close();
      }
      // And back onto a new embedded database.
      const backDir = path.join(tmp, 'pglite-back');
      await restoreInto({ dataDir: backDir }, onPostgres);
      const back = path.join(tmp, 'back.zip');
      const again = await openDatabase({ dataDir: backDir });
      try {
        await createBackup({ config: { dataDir: backDir, webhookSecretKey: undefined }, database: again, blobs: new LocalBlobStore(path.join(backDir, 'blobs')) }, back);
      } finally {
        await again.close();
      }
      const original = await archiveContents(embedded);
      expect(await archiveContents(onPostgres)).toEqual(original);
      expect(await archiveContents(back)).toEqual(original);
      const restoredFile = await fs.readFile(path.join(backDir, 'blobs', ...(await blobKeyOf(embedded, fileBytes.length)).split('/')));
      expect(Buffer.compare(restoredFile, fileBytes)).toBe(0);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    }
  });
});

/** An offset in the middle of the compressed data of the archive's largest table entry. */
async function offsetInsideLargestTable(file: string, bytes: Buffer): Promise<number> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false });
  let largest: yauzl.Entry | undefined;
  try {
    for await (const entry of zip.eachEntry()) {
      if (/^db\/.+\.jsonl$/.test(entry.fileName) && entry.compressedSize > (largest?.compressedSize ?? 0)) largest = entry;
    }
  } finally {
    zip.close();
  }
  if (!largest) throw new Error('no table entry');
  const header = largest.relativeOffsetOfLocalHeader;
  // Local file header: 30 fixed bytes, then the name and the extra field, whose lengths it gives at 26 and 28.
  const dataStart = header + 30 + bytes.readUInt16LE(header + 26) + bytes.readUInt16LE(header + 28);
  return dataStart + Math.floor(largest.compressedSize / 2);
}

async function blobKeyOf(file: string, size: number): Promise<string> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName === 'manifest.json') {
        const chunks: Buffer[] = [];
        for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
        const manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BackupManifest;
        return manifest.blobs.find((b) => b.size === size)!.key;
      }
    }
  } finally {
    zip.close();
  }
  throw new Error('no manifest');
}
