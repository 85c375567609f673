import { errors, RateLimitedError } from '../errors';
import { newId } from '../lib/ids';
import type { Actor } from '../policy/actor';
import { countRunningJobs, findJob, finishJob, insertJob, updateJobProgress } from '../persistence/jobs';
import type { JobError } from '../persistence/schema';
import { findWorkspaceById } from '../persistence/workspaces';
import type { JobRecord } from '../model/schemas/imports';
import type { Services } from './services';

/**
 * Work answered before it is done (a workspace import: docs/IMPORT-EXPORT.md):
 * a row in `jobs` that the work moves on as it goes, and that
 * `GET /api/jobs/{id}` reads. An organisation runs at most JOBS_AT_ONCE at
 * a time (429 beyond), counted in the database so every instance sees the
 * same count. A job whose process died stops beating and reads as failed.
 */

export const JOBS_AT_ONCE = 2;
/** A running job writes its progress at least this often; one silent for three times as long died with its process. */
const HEARTBEAT_MS = 20_000;
const STALE_MS = 3 * HEARTBEAT_MS;
/** Progress is written at most this often (a read sees it at most this late). */
const PROGRESS_EVERY_MS = 250;

export type JobRow = NonNullable<Awaited<ReturnType<typeof findJob>>>;

/** Records a new running job of the caller, or 429 when the organisation runs JOBS_AT_ONCE already. */
export async function startJob(services: Services, actor: Actor, orgId: string, kind: 'workspace_import'): Promise<string> {
  const now = services.clock.now();
  const running = await countRunningJobs(services.db, orgId, new Date(now.getTime() - STALE_MS));
  if (running >= JOBS_AT_ONCE) {
    throw new RateLimitedError(
      'jobs',
      JOBS_AT_ONCE,
      'concurrent',
      new Date(now.getTime() + 10_000),
      now,
      `This organisation is running ${JOBS_AT_ONCE} imports, the most it may at once; nothing was read or written.`,
    );
  }
  const id = newId('job');
  await insertJob(services.db, { id, orgId, kind, principalId: actor.principal.id, principalType: actor.principal.principalType, createdAt: now });
  return id;
}

/** How a running job reports: progress (throttled), the workspace it made, and its end. */
export class JobReporter {
  private lastWrite = 0;
  private done = 0;
  private total = 0;
  readonly errors: JobError[] = [];

  constructor(
    private readonly services: Services,
    readonly id: string,
  ) {}

  async progress(done: number, total: number, workspaceId?: string) {
    this.done = done;
    this.total = total;
    const now = Date.now();
    if (workspaceId === undefined && now - this.lastWrite < PROGRESS_EVERY_MS) return;
    this.lastWrite = now;
    await updateJobProgress(this.services.db, this.id, { done, total, workspaceId, at: this.services.clock.now() });
  }

  /** Writes the progress as it is if nothing was written for a while, so the job keeps beating through a long step. */
  async beat() {
    if (Date.now() - this.lastWrite >= HEARTBEAT_MS / 2) await this.progress(this.done, this.total, undefined);
  }

  async finish(status: 'done' | 'failed', workspaceId?: string | null) {
    await updateJobProgress(this.services.db, this.id, { done: status === 'done' ? this.total : this.done, total: this.total, at: this.services.clock.now() });
    await finishJob(this.services.db, this.id, { status, errors: this.errors, at: this.services.clock.now(), ...(workspaceId !== undefined ? { workspaceId } : {}) });
  }
}

/** A job as its starter sees it; anyone else gets 404 (a job names a workspace being made, which only its maker may know of yet). */
export async function readJob(services: Services, actor: Actor, id: string): Promise<JobRecord> {
  const job = await findJob(services.db, id);
  if (!job || job.principalId !== actor.principal.id) throw errors.notFound('Job');
  const stale = job.status === 'running' && services.clock.now().getTime() - job.heartbeatAt.getTime() > STALE_MS;
  const workspace = job.workspaceId ? await findWorkspaceById(services.db, job.workspaceId) : undefined;
  return {
    id: job.id,
    kind: job.kind,
    status: stale ? 'failed' : job.status,
    progress: { done: job.progressDone, total: job.progressTotal },
    ...(workspace && !workspace.archivedAt ? { workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name } } : {}),
    errors: stale ? [...job.errors, { path: '', message: 'The import stopped with the server that ran it; start it again.' }] : job.errors,
    createdAt: job.createdAt.toISOString(),
    finishedAt: job.finishedAt?.toISOString() ?? null,
  };
}
