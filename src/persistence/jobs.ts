import type { Executor } from './database';
import type { JobError, PrincipalKind } from './schema';

/** Background jobs (migration 0130): a workspace import's status, progress and problems. */

export async function insertJob(db: Executor, job: { id: string; orgId: string; kind: 'workspace_import'; principalId: string; principalType: PrincipalKind; createdAt: Date }) {
  await db.insertInto('jobs').values({ ...job, heartbeatAt: job.createdAt }).execute();
}

export async function findJob(db: Executor, id: string) {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Jobs of an organisation still running, those whose heartbeat is older than `staleBefore` left out (their process died). */
export async function countRunningJobs(db: Executor, orgId: string, staleBefore: Date): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('orgId', '=', orgId)
    .where('status', '=', 'running')
    .where('heartbeatAt', '>=', staleBefore)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Progress of a running job; also its heartbeat. */
export async function updateJobProgress(db: Executor, id: string, progress: { done: number; total: number; workspaceId?: string | null; at: Date }) {
  await db
    .updateTable('jobs')
    .set({
      progressDone: progress.done,
      progressTotal: progress.total,
      heartbeatAt: progress.at,
      ...(progress.workspaceId !== undefined ? { workspaceId: progress.workspaceId } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

export async function finishJob(db: Executor, id: string, result: { status: 'done' | 'failed'; errors: JobError[]; at: Date; workspaceId?: string | null }) {
  await db
    .updateTable('jobs')
    .set({
      status: result.status,
      errors: JSON.stringify(result.errors),
      finishedAt: result.at,
      heartbeatAt: result.at,
      ...(result.workspaceId !== undefined ? { workspaceId: result.workspaceId } : {}),
    })
    .where('id', '=', id)
    .execute();
}
