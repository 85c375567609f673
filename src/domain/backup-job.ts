import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomToken } from '../lib/secrets';
import { backupFileName, createBackup, type BackupManifest } from './backup';
import type { Services } from './services';

export type BackupStatus = {
  /** BACKUP_DIR is set: backups run on a timer. */
  scheduled: boolean;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  /** Why the last failure failed (no secret: a message of ours, a file system or database error). */
  lastError: string | null;
  lastFile: string | null;
};

/** A backup is already being written; one at a time keeps the disk and the embedded database's lock free. */
export class BackupBusyError extends Error {
  constructor() {
    super('A backup is being written right now; try again when it is done.');
    this.name = 'BackupBusyError';
  }
}

const SCHEDULED_NAME = /^trellis-backup-\d{8}T\d{6}Z\.zip$/;

/**
 * Backups taken by the running server: on request (the admin route the CLI
 * calls, since the embedded database cannot be opened by a second process)
 * and, with BACKUP_DIR, on a timer, keeping the newest BACKUP_KEEP archives.
 * Success and failure of either are what /metrics and /api/health report.
 */
export class Backups {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  readonly status: BackupStatus;

  constructor(private readonly services: Services) {
    this.status = { scheduled: Boolean(services.config.backup), lastSuccessAt: null, lastFailureAt: null, lastError: null, lastFile: null };
  }

  /** Writes an archive to `outFile`; a second call while one is written is refused. */
  async take(outFile: string): Promise<BackupManifest> {
    if (this.running) throw new BackupBusyError();
    const services = this.services;
    const pass = createBackup({ config: services.config, database: services.database, blobs: services.blobs, clock: services.clock }, outFile);
    this.running = pass.catch(() => {});
    try {
      const manifest = await pass;
      this.status.lastSuccessAt = services.clock.now();
      this.status.lastFile = outFile;
      return manifest;
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      this.running = null;
    }
  }

  private failed(error: unknown) {
    this.status.lastFailureAt = this.services.clock.now();
    this.status.lastError = error instanceof Error ? error.message : String(error);
  }

  /** An archive in a temporary file, for the admin route to stream (it removes the file). */
  async takeTemporary(): Promise<{ file: string; manifest: BackupManifest }> {
    const file = path.join(os.tmpdir(), `trellis-backup-${randomToken(12)}.zip`);
    return { file, manifest: await this.take(file) };
  }

  /** One scheduled backup into BACKUP_DIR, then the oldest archives beyond BACKUP_KEEP removed. */
  async runScheduled(): Promise<string | null> {
    const backup = this.services.config.backup;
    if (!backup) return null;
    await fs.mkdir(backup.dir, { recursive: true }).catch((error: unknown) => {
      this.failed(error);
      throw error;
    });
    const file = path.join(backup.dir, backupFileName(this.services.clock.now()));
    await this.take(file);
    const archives = (await fs.readdir(backup.dir)).filter((name) => SCHEDULED_NAME.test(name)).sort();
    for (const old of archives.slice(0, Math.max(0, archives.length - backup.keep))) await fs.rm(path.join(backup.dir, old), { force: true });
    return file;
  }

  start() {
    const backup = this.services.config.backup;
    if (!backup || this.timer) return;
    this.timer = setInterval(() => {
      this.runScheduled().catch((error) => this.services.log.error({ err: error }, 'scheduled backup failed'));
    }, backup.everyMs).unref();
  }

  async stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
