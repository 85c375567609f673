import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { pipeline as pipelineCallback, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import type yazl from 'yazl';
import type { Config } from '../config';
import type { BlobStore } from '../files/blob-store';
import {
  appliedMigrations,
  countRows,
  dumpDatabase,
  emptyTables,
  listTables,
  loadRows,
  resetIdentities,
  type DumpTable,
} from '../persistence/backup';
import { knownMigrations, migrateToLatest, type DatabaseHandle } from '../persistence/database';
import { sha256Hex } from '../lib/secrets';
import { whenNeeded } from '../lib/when-needed';

/**
 * Backup and restore (docs/_backup.md). An archive is one zip file:
 *
 *   db/<nnn>-<table>.jsonl   the rows of each table, in dependency order (src/persistence/backup.ts)
 *   blobs/<key>              the bytes of files, thumbnails, doc images, avatars
 *   webhook-secret.key       the key file that seals webhook secrets, when the deployment uses one
 *   manifest.json            format, schema (migrations), counts, sha-256 and size of every entry
 *
 * The manifest is written last: its hashes are taken as the entries stream by.
 * A restore checks the whole archive against it before it writes anything.
 */

export const BACKUP_FORMAT = 'trellis-backup';
export const BACKUP_FORMAT_VERSION = 1;
const WEBHOOK_KEY_FILE = 'webhook-secret.key';
const MANIFEST = 'manifest.json';

export type BackupManifest = {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  /** The newest migration applied; `migrations` is the full set (numbers are reserved per area, so one name is not enough). */
  schemaVersion: string;
  migrations: string[];
  createdAt: string;
  source: { database: 'pglite' | 'postgres'; blobs: 'local' | 's3' };
  tables: Array<{ name: string; entry: string; rows: number }>;
  blobs: Array<{ key: string; entry: string; contentType: string; size: number }>;
  /** Keys the database named whose bytes were gone when the backup read them (a file purged meanwhile). */
  missingBlobs: string[];
  webhookSecretKey: string | null;
  entries: Record<string, { size: number; sha256: string }>;
};

/** The archive cannot be restored: corrupt, truncated, foreign or from a newer Trellis. Nothing was changed. */
export class BackupArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupArchiveError';
  }
}

/** The target store refuses the restore (not empty, another schema). Nothing was changed. */
export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

export type BackupDeps = { config: Pick<Config, 'dataDir' | 'webhookSecretKey'>; database: DatabaseHandle; blobs: BlobStore; clock?: { now(): Date } };

/** Tables whose columns name blobs: the keys a backup copies are the ones its snapshot refers to. */
const BLOB_COLUMNS: Record<string, string[]> = {
  stored_blobs: ['key'],
  files: ['blob_key', 'thumb_key'],
  file_uploads: ['blob_key'],
};

function hashing(onDone: (sha256: string, size: number) => void): Transform {
  const hash = createHash('sha256');
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.byteLength;
      done(null, chunk);
    },
    flush(done) {
      onDone(hash.digest('hex'), size);
      done();
    },
  });
}

/**
 * Writes a backup archive to `outFile` (through `<outFile>.partial`, renamed
 * when complete, so a failed backup never leaves a file that looks whole).
 * The database part is one consistent snapshot; blobs are read after it,
 * and blobs never change under a key, so the bytes match the snapshot.
 */
export async function createBackup(deps: BackupDeps, outFile: string): Promise<BackupManifest> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'trellis-backup-'));
  const partial = `${outFile}.partial`;
  try {
    const entries: BackupManifest['entries'] = {};
    const tableFiles: Array<{ name: string; entry: string; file: string }> = [];
    const blobKeys = new Set<string>();
    let current: { handle: fs.FileHandle; hash: ReturnType<typeof createHash>; size: number; buffer: string[]; buffered: number; entry: string } | null = null;
    const flush = async () => {
      if (!current || current.buffer.length === 0) return;
      const chunk = Buffer.from(current.buffer.join(''));
      current.buffer = [];
      current.buffered = 0;
      current.hash.update(chunk);
      current.size += chunk.byteLength;
      await current.handle.write(chunk);
    };
    const finish = async () => {
      if (!current) return;
      await flush();
      await current.handle.close();
      entries[current.entry] = { size: current.size, sha256: current.hash.digest('hex') };
      current = null;
    };
    const dump = await dumpDatabase(deps.database.db, {
      table: async (table: DumpTable) => {
        await finish();
        const entry = `db/${String(tableFiles.length).padStart(3, '0')}-${table.name}.jsonl`;
        const file = path.join(work, `${tableFiles.length}.jsonl`);
        tableFiles.push({ name: table.name, entry, file });
        current = { handle: await fs.open(file, 'wx'), hash: createHash('sha256'), size: 0, buffer: [], buffered: 0, entry };
      },
      row: async (table, line) => {
        const columns = BLOB_COLUMNS[table.name];
        if (columns) {
          const value = JSON.parse(line) as Record<string, unknown>;
          for (const column of columns) if (typeof value[column] === 'string') blobKeys.add(value[column] as string);
        }
        current!.buffer.push(line, '\n');
        current!.buffered += line.length + 1;
        if (current!.buffered > 1 << 20) await flush();
      },
    });
    await finish();
    const counts = new Map(dump.tables.map((t) => [t.name, t.rows]));

    const blobs: BackupManifest['blobs'] = [];
    const missingBlobs: string[] = [];
    for (const key of [...blobKeys].sort()) {
      const stat = await deps.blobs.stat(key);
      if (!stat) missingBlobs.push(key);
      else blobs.push({ key, entry: `blobs/${key}`, contentType: stat.contentType, size: stat.size });
    }

    let webhookSecretKey: string | null = null;
    let keyBytes: Buffer | null = null;
    if (!deps.config.webhookSecretKey) {
      keyBytes = await fs.readFile(path.join(deps.config.dataDir, WEBHOOK_KEY_FILE)).catch(() => null);
      if (keyBytes) {
        webhookSecretKey = WEBHOOK_KEY_FILE;
        entries[WEBHOOK_KEY_FILE] = { size: keyBytes.byteLength, sha256: sha256Hex(keyBytes) };
      }
    }

    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      schemaVersion: dump.migrations.at(-1) ?? '',
      migrations: dump.migrations,
      createdAt: (deps.clock?.now() ?? new Date()).toISOString(),
      source: { database: deps.database.kind, blobs: deps.blobs.kind },
      tables: tableFiles.map((t) => ({ name: t.name, entry: t.entry, rows: counts.get(t.name) ?? 0 })),
      blobs,
      missingBlobs,
      webhookSecretKey,
      entries,
    };

    const zip = new (whenNeeded<typeof yazl>('yazl').ZipFile)();
    const output = zip.outputStream as Readable;
    // An entry that cannot be read fails the archive (unhandled, the error would end the process).
    zip.on('error', (error: Error) => output.destroy(error));
    const written = pipeline(output, createWriteStream(partial));
    const mtime = new Date(manifest.createdAt);
    for (const t of tableFiles) zip.addFile(t.file, t.entry, { mtime, compress: true });
    for (const blob of blobs) {
      zip.addReadStreamLazy(blob.entry, { mtime, compress: !/^(image|video|audio)\/|zip|gzip|compressed/.test(blob.contentType) }, (callback) => {
        deps.blobs.get(blob.key).then(
          (stored) => {
            if (!stored) return callback(new Error(`The blob ${blob.key} disappeared while the backup read it; run the backup again.`), null as never);
            const hashed = hashing((sha256, size) => (entries[blob.entry] = { sha256, size }));
            // yazl does not watch its sources for errors: a failed read fails the archive here.
            pipelineCallback(stored.body, hashed, (error) => error && output.destroy(error));
            callback(null, hashed);
          },
          (error: Error) => callback(error, null as never),
        );
      });
    }
    if (keyBytes) zip.addBuffer(keyBytes, WEBHOOK_KEY_FILE, { mtime, compress: false });
    // Lazy: yazl reads entries in order, so every hash above is known when this is opened.
    zip.addReadStreamLazy(MANIFEST, { mtime, compress: true }, (callback) => callback(null, Readable.from([Buffer.from(JSON.stringify(manifest, null, 2) + '\n')])));
    zip.end();
    await written;
    await fs.rename(partial, outFile);
    return manifest;
  } catch (error) {
    await fs.rm(partial, { force: true });
    throw error;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

type OpenArchive = { zip: yauzl.ZipFile; entries: Map<string, yauzl.Entry>; manifest: BackupManifest };

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Opens an archive and checks all of it against its manifest: every entry
 * present with its size and sha-256, nothing extra, row counts as counted,
 * a schema this build knows. Throws BackupArchiveError otherwise.
 */
export async function verifyArchive(file: string): Promise<OpenArchive> {
  const name = path.basename(file);
  let zip: yauzl.ZipFile;
  try {
    zip = await whenNeeded<typeof yauzl>('yauzl').openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new BackupArchiveError(`No archive at ${file}.`);
    throw new BackupArchiveError(`${name} is not a readable Trellis backup (truncated, or not a zip archive): ${(error as Error).message}`);
  }
  try {
    const entries = new Map<string, yauzl.Entry>();
    try {
      for await (const entry of zip.eachEntry()) entries.set(entry.fileName, entry);
    } catch (error) {
      throw new BackupArchiveError(`${name} is damaged: its table of contents cannot be read (${(error as Error).message}).`);
    }
    const manifestEntry = entries.get(MANIFEST);
    if (!manifestEntry) throw new BackupArchiveError(`${name} has no ${MANIFEST}: it is not a Trellis backup.`);
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse((await readAll(await zip.openReadStreamPromise(manifestEntry))).toString('utf8')) as BackupManifest;
    } catch (error) {
      throw new BackupArchiveError(`${name}: ${MANIFEST} is damaged (${(error as Error).message}).`);
    }
    if (manifest?.format !== BACKUP_FORMAT || !manifest.entries || !Array.isArray(manifest.tables) || !Array.isArray(manifest.migrations)) {
      throw new BackupArchiveError(`${name}: ${MANIFEST} is not a Trellis backup manifest.`);
    }
    if (manifest.formatVersion > BACKUP_FORMAT_VERSION) {
      throw new BackupArchiveError(`${name} is backup format ${manifest.formatVersion}; this Trellis reads up to ${BACKUP_FORMAT_VERSION}. Restore with a newer Trellis.`);
    }
    const known = new Set(knownMigrations());
    const unknown = manifest.migrations.filter((m) => !known.has(m));
    if (unknown.length > 0) {
      throw new BackupArchiveError(`${name} was made by a newer Trellis (schema ${manifest.schemaVersion}; unknown migrations: ${unknown.join(', ')}). Restore with that version or newer.`);
    }
    for (const entryName of entries.keys()) {
      if (entryName !== MANIFEST && !Object.hasOwn(manifest.entries, entryName)) throw new BackupArchiveError(`${name} holds ${entryName}, which its manifest does not list.`);
    }
    const rowsByEntry = new Map(manifest.tables.map((t) => [t.entry, t.rows]));
    for (const [entryName, expected] of Object.entries(manifest.entries)) {
      const entry = entries.get(entryName);
      if (!entry) throw new BackupArchiveError(`${name} is incomplete: ${entryName} is missing.`);
      let sha256 = '';
      let size = 0;
      let lines = 0;
      try {
        const stream = await zip.openReadStreamPromise(entry);
        const hash = createHash('sha256');
        for await (const chunk of stream) {
          const bytes = chunk as Buffer;
          hash.update(bytes);
          size += bytes.byteLength;
          for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines++;
        }
        sha256 = hash.digest('hex');
      } catch (error) {
        throw new BackupArchiveError(`${name} is damaged: ${entryName} cannot be read (${(error as Error).message}).`);
      }
      if (sha256 !== expected.sha256 || size !== expected.size) {
        throw new BackupArchiveError(`${name} is damaged: ${entryName} does not match its checksum in the manifest.`);
      }
      const rows = rowsByEntry.get(entryName);
      if (rows !== undefined && rows !== lines) throw new BackupArchiveError(`${name}: ${entryName} holds ${lines} rows, the manifest counts ${rows}.`);
    }
    return { zip, entries, manifest };
  } catch (error) {
    zip.close();
    throw error;
  }
}

export type RestoreResult = { manifest: BackupManifest; rows: number; blobs: number; emptied: boolean };

/**
 * Restores an archive into `deps`' store: the archive is checked whole
 * first, then the store (empty, or emptied with `force`), then the empty
 * store is migrated to the archive's schema, the blobs written, the rows
 * loaded in one transaction, and the schema migrated to this build's.
 * Run it with the server stopped: a running server holds documents in memory.
 */
export async function restoreBackup(deps: BackupDeps, file: string, options: { force?: boolean } = {}): Promise<RestoreResult> {
  const archive = await verifyArchive(file);
  const { zip, manifest } = archive;
  try {
    const db = deps.database.db;
    const applied = await appliedMigrations(db);
    let emptied = false;
    if (applied.length > 0) {
      const counts = await countRows(db);
      const filled = Object.entries(counts).filter(([, n]) => n > 0);
      if (filled.length > 0 && !options.force) {
        const total = filled.reduce((sum, [, n]) => sum + n, 0);
        throw new RestoreRefusedError(
          `The target store is not empty (${total} rows in ${filled.length} tables, e.g. ${filled.slice(0, 3).map(([t, n]) => `${t}: ${n}`).join(', ')}). ` +
            'Restore into a fresh DATA_DIR or an empty database, or pass --force to empty this one first.',
        );
      }
      const archived = [...manifest.migrations].sort();
      if (applied.length !== archived.length || applied.some((m, i) => m !== archived[i])) {
        throw new RestoreRefusedError(
          archived.every((m) => applied.includes(m))
            ? `The archive's schema (${manifest.schemaVersion}) is older than this store's (${applied.at(-1)}); restore into a fresh DATA_DIR or an empty database (never migrated), which is brought to the archive's schema first.`
            : `This store's schema (${applied.at(-1)}) is not the archive's (${manifest.schemaVersion}); restore into a fresh DATA_DIR or an empty database.`,
        );
      }
      emptied = filled.length > 0;
    } else {
      await migrateToLatest(db, manifest.migrations);
    }

    for (const blob of manifest.blobs) {
      const stream = await zip.openReadStreamPromise(archive.entries.get(blob.entry)!);
      await deps.blobs.put(blob.key, stream, blob.contentType);
    }

    let rows = 0;
    await db.transaction().execute(async (tx) => {
      if (emptied) await emptyTables(tx);
      const tables = new Map((await listTables(tx)).map((t) => [t.name, t]));
      const loaded: DumpTable[] = [];
      for (const t of manifest.tables) {
        const table = tables.get(t.name);
        if (!table) throw new BackupArchiveError(`The archive holds a table ${t.name} that its schema (${manifest.schemaVersion}) does not have.`);
        const input = readline.createInterface({ input: await zip.openReadStreamPromise(archive.entries.get(t.entry)!), crlfDelay: Infinity });
        let batch: string[] = [];
        let batchBytes = 0;
        for await (const line of input) {
          if (line === '') continue;
          batch.push(line);
          batchBytes += line.length;
          // Update logs hold large rows: a batch is bounded by size as well as by count.
          if (batch.length >= 500 || batchBytes >= 8 << 20) {
            await loadRows(tx, table, batch);
            rows += batch.length;
            batch = [];
            batchBytes = 0;
          }
        }
        await loadRows(tx, table, batch);
        rows += batch.length;
        loaded.push(table);
      }
      await resetIdentities(tx, loaded);
    });
    await migrateToLatest(db);

    if (manifest.webhookSecretKey) {
      const bytes = await readAll(await zip.openReadStreamPromise(archive.entries.get(manifest.webhookSecretKey)!));
      await fs.mkdir(deps.config.dataDir, { recursive: true });
      await fs.writeFile(path.join(deps.config.dataDir, WEBHOOK_KEY_FILE), bytes, { mode: 0o600 });
    }
    return { manifest, rows, blobs: manifest.blobs.length, emptied };
  } finally {
    zip.close();
  }
}

/** Reads an archive's manifest after checking the archive (for `restore --check` and tests). */
export async function readManifest(file: string): Promise<BackupManifest> {
  const archive = await verifyArchive(file);
  archive.zip.close();
  return archive.manifest;
}

/** Streams a file and removes it once sent or abandoned (the admin route's archive). */
/** `trellis-backup-20261127T001500Z.zip`: sorts by time, safe in any file system and in a download name. */
export function backupFileName(at: Date): string {
  return `trellis-backup-${at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.zip`;
}

export function streamAndRemove(file: string): Readable {
  const stream = createReadStream(file);
  stream.once('close', () => void fs.rm(file, { force: true }));
  return stream;
}
