import { sql } from 'kysely';
import type { Db, Executor } from './database';
import { parameterList, runStatement, valueTuples, withHeads, type StatementHead } from './raw-statements';
import type { PrincipalKind, RunRow } from './schema';

/**
 * Runs and what they changed (migration 0100, docs/RUNS.md). A run's
 * changes are written by the observer in the transaction that marks their
 * updates derived; reading them never needs the update log.
 */

export type NewRun = {
  id: string;
  workspaceId: string;
  name: string;
  principal: { principalType: PrincipalKind; id: string };
  automatic: boolean;
  actorKey: string | null;
  reverts: string | null;
  startedAt: Date;
};

export type RunChangeWrite = { runId: string; document: string; surfaceId: string | null; kind: string; change: unknown };

export type StoredRunChange = { seq: number; document: string; surfaceId: string | null; kind: string; change: unknown };

// Six parameters a change; Postgres allows 65,535 a statement.
const CHANGES_PER_INSERT = 5_000;

export async function insertRun(db: Executor, run: NewRun): Promise<RunRow> {
  return db
    .insertInto('runs')
    .values({
      id: run.id,
      workspaceId: run.workspaceId,
      name: run.name,
      principalType: run.principal.principalType,
      principalId: run.principal.id,
      automatic: run.automatic,
      actorKey: run.actorKey,
      reverts: run.reverts,
      startedAt: run.startedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findRun(db: Executor, id: string): Promise<RunRow | undefined> {
  return db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The newest automatic run of a key or grant in a workspace that is not marked ended. */
export async function findOpenAutomaticRun(db: Executor, workspaceId: string, actorKey: string): Promise<RunRow | undefined> {
  return db
    .selectFrom('runs')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('actorKey', '=', actorKey)
    .where('automatic', '=', true)
    .where('endedAt', 'is', null)
    .orderBy('startedAt', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Ends the run at `at` if it is still open; the run as ended, or undefined when it already was. */
export async function endRun(db: Executor, id: string, at: Date): Promise<RunRow | undefined> {
  return db.updateTable('runs').set({ endedAt: at }).where('id', '=', id).where('endedAt', 'is', null).returningAll().executeTakeFirst();
}

/** Open automatic runs whose last write (or start) is before `idleBefore`. */
export async function listIdleAutomaticRuns(db: Executor, idleBefore: Date, limit: number): Promise<RunRow[]> {
  return db
    .selectFrom('runs')
    .selectAll()
    .where('automatic', '=', true)
    .where('endedAt', 'is', null)
    .where(sql<boolean>`coalesce(last_write_at, started_at) < ${idleBefore}`)
    .limit(limit)
    .execute();
}

export type RunListQuery = {
  principalId?: string;
  status?: 'open' | 'ended';
  limit: number;
  /** The last run of the previous page: the list continues after it (newest first). */
  after?: { startedAt: Date; id: string };
  /** Automatic runs last written before this read as ended. */
  idleBefore: Date;
};

/**
 * A workspace's runs, newest first. Automatic runs that never wrote
 * anything (a refused write opened them) are left out.
 */
export async function listRuns(db: Executor, workspaceId: string, query: RunListQuery): Promise<RunRow[]> {
  const idle = sql<boolean>`(automatic and coalesce(last_write_at, started_at) < ${query.idleBefore})`;
  let select = db
    .selectFrom('runs')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where(sql<boolean>`not (automatic and last_write_at is null)`);
  if (query.principalId) select = select.where('principalId', '=', query.principalId);
  if (query.status === 'open') select = select.where('endedAt', 'is', null).where(sql<boolean>`not ${idle}`);
  if (query.status === 'ended') select = select.where(sql<boolean>`(ended_at is not null or ${idle})`);
  if (query.after) select = select.where(sql<boolean>`(started_at, id) < (${query.after.startedAt}, ${query.after.id})`);
  return select.orderBy('startedAt', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
}

/** The runs that reverted each of these runs, newest first. */
export async function listReverts(db: Executor, runIds: readonly string[]): Promise<RunRow[]> {
  if (runIds.length === 0) return [];
  return db.selectFrom('runs').selectAll().where('reverts', 'in', [...runIds]).orderBy('startedAt', 'desc').execute();
}

/**
 * Records what runs changed and notes that they wrote at `at` (an automatic
 * run ends 15 minutes after its last write). The touch rides in the first
 * insert's statement: one round trip inside the commit instead of two.
 */
export async function recordRunChanges(db: Executor, changes: readonly RunChangeWrite[], at: Date): Promise<void> {
  if (changes.length === 0) return;
  const head = runChangesHead(changes, at, 1);
  if (head) {
    await runStatement(db, `${withHeads([head])}select 1`, head.parameters);
    return;
  }
  for (let from = 0; from < changes.length; from += CHANGES_PER_INSERT) {
    await db.insertInto('runChanges').values(changes.slice(from, from + CHANGES_PER_INSERT).map(changeRow)).execute();
  }
  await db.updateTable('runs').set({ lastWriteAt: at }).where('id', 'in', runIdsOf(changes)).execute();
}

/**
 * `recordRunChanges` as the head of another statement of the same commit
 * (written out: raw-statements.ts; every commit of an agent's write has
 * one), its parameters numbered from `first`; null past one insert's rows.
 */
export function runChangesHead(changes: readonly RunChangeWrite[], at: Date, first: number): StatementHead | null {
  if (changes.length === 0 || changes.length > CHANGES_PER_INSERT) return null;
  const width = 5;
  const parameters: unknown[] = changes.flatMap((c) => [c.runId, c.document, c.surfaceId, c.kind, JSON.stringify(c.change)]);
  const runIds = runIdsOf(changes);
  const atParameter = first + parameters.length;
  return {
    text:
      `recorded as (insert into run_changes (run_id, document, surface_id, kind, change) values ${valueTuples(changes.length, width, first)}), ` +
      `touched as (update runs set last_write_at = $${atParameter} where id in (${parameterList(runIds.length, atParameter + 1)}))`,
    parameters: [...parameters, at, ...runIds],
  };
}

function changeRow(c: RunChangeWrite) {
  return { runId: c.runId, document: c.document, surfaceId: c.surfaceId, kind: c.kind, change: JSON.stringify(c.change) };
}

function runIdsOf(changes: readonly RunChangeWrite[]): string[] {
  return [...new Set(changes.map((c) => c.runId))];
}

/** A run's changes in the order they were made. */
export async function listRunChanges(db: Db | Executor, runId: string): Promise<StoredRunChange[]> {
  const rows = await db.selectFrom('runChanges').select(['seq', 'document', 'surfaceId', 'kind', 'change']).where('runId', '=', runId).orderBy('seq').execute();
  return rows.map((row) => ({ seq: Number(row.seq), document: row.document, surfaceId: row.surfaceId, kind: row.kind, change: row.change }));
}

/** The changes of several runs (a page of a list), each run's in order. */
export async function listChangesOfRuns(db: Executor, runIds: readonly string[]): Promise<Map<string, StoredRunChange[]>> {
  const byRun = new Map<string, StoredRunChange[]>(runIds.map((id) => [id, []]));
  if (runIds.length === 0) return byRun;
  const rows = await db
    .selectFrom('runChanges')
    .select(['runId', 'seq', 'document', 'surfaceId', 'kind', 'change'])
    .where('runId', 'in', [...runIds])
    .orderBy('runId')
    .orderBy('seq')
    .execute();
  for (const row of rows) byRun.get(row.runId)?.push({ seq: Number(row.seq), document: row.document, surfaceId: row.surfaceId, kind: row.kind, change: row.change });
  return byRun;
}
