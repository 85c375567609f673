import { sql } from 'kysely';
import { storableJson } from '../lib/text';
import type { Executor } from './database';
import type { PlanName } from './schema';
import type { AuthorKind } from '../model/roles';
import { holdsIndexEntries, indexRows, indexUnindexedRows, reindexHead, reindexWorkspace, unindexHead, unindexRows } from './row-indexes';
import { runStatement, valueTuples, withHeads } from './raw-statements';
import { recordRunChanges, runChangesHead, type RunChangeWrite } from './runs';
import { eventsHead, insertEvents, LOGGED_EVENTS, recordsOfLogged } from './events';
import type { EventDraft, EventRecord } from '../model/event-record';
import type { AppendedRow, AppendHead } from './document-log';

/** The row projection the observer keeps: attribution, timestamps, counts, search, and the date and file indexes beside it (row-indexes.ts). */

/** Keyed by (workspaceId, id): ids are chosen by sync clients and are unique only within a workspace. */
export type RowProjection = {
  id: string;
  workspaceId: string;
  surfaceId: string;
  position: number;
  data: Record<string, unknown>;
};

type Attribution = { id: string; type: AuthorKind } | null;

/** A row's state after a batch of changes, and who made them: the creator if the batch created it, the last writer otherwise. */
export type RowWrite = RowProjection & { createdBy: Attribution; updatedBy: Attribution };

// Eleven parameters a row; Postgres allows 65,535 a statement.
const ROWS_PER_UPSERT = 5_000;
const MAX_PARAMETERS = 65_535;

/**
 * Writes rows to the projection in one statement per 5,000 (written out:
 * raw-statements.ts) and returns what
 * is stored for each (attribution and timestamps), so a reply needs no second
 * lookup. A new row gets `createdBy` (and `updatedBy` only when a later change
 * of the same batch edited it); an existing row keeps its creator and takes
 * the batch's last writer as `updatedBy`. `runChanges`, what runs changed in
 * the same commit, are recorded too (runs.ts `recordRunChanges`), and so are
 * `events.drafts`, the commit's events, returned as recorded (events.ts
 * `insertEvents`).
 *
 * `alone`: outside a transaction, the whole write in one statement (atomic
 * on its own) or none; null when it would take more (nothing written).
 */
export async function upsertRows(
  db: Executor,
  rows: ReadonlyArray<RowWrite>,
  at: Date,
  runChanges: readonly RunChangeWrite[],
  events: { drafts: EventDraft[]; now: Date },
  append: AppendHead | null,
  alone: true,
): Promise<{ stored: Map<string, RowMeta>; events: EventRecord[]; appended: AppendedRow[] | null } | null>;
export async function upsertRows(
  db: Executor,
  rows: ReadonlyArray<RowWrite>,
  at: Date,
  runChanges?: readonly RunChangeWrite[],
  events?: { drafts: EventDraft[]; now: Date },
  append?: AppendHead | null,
): Promise<{ stored: Map<string, RowMeta>; events: EventRecord[]; appended: AppendedRow[] | null }>;
export async function upsertRows(
  db: Executor,
  rows: ReadonlyArray<RowWrite>,
  at: Date,
  runChanges: readonly RunChangeWrite[] = [],
  events: { drafts: EventDraft[]; now: Date } = { drafts: [], now: at },
  append: AppendHead | null = null,
  alone = false,
): Promise<{ stored: Map<string, RowMeta>; events: EventRecord[]; appended: AppendedRow[] | null } | null> {
  const stored = new Map<string, RowMeta>();
  let appended: AppendedRow[] | null = null;
  // A commit's rows, the usual batch: the upsert deletes their old index entries, and records the runs' changes and the events, in the same statement.
  const single = rows.length > 0 && rows.length <= ROWS_PER_UPSERT;
  // Rows with a date or a file in a cell: their entries ride too (delete, insert), within a tenth of the statement's parameters.
  // ('no entries': the unindex head is the whole of it; the entries were looked for once, here.)
  const reindexed = single ? reindexHead(rows, rows.length * UPSERT_COLUMNS + 1, Math.min(Math.floor(MAX_PARAMETERS / 10), MAX_PARAMETERS - rows.length * UPSERT_COLUMNS)) : null;
  const reindex = reindexed === 'no entries' ? null : reindexed;
  const unindex = reindex ?? (single ? unindexHead(rows, rows.length * UPSERT_COLUMNS + 1) : null);
  let used = rows.length * UPSERT_COLUMNS + (unindex?.parameters.length ?? 0);
  const head = single ? runChangesHead(runChanges, at, used + 1) : null;
  const runs = head && used + head.parameters.length <= MAX_PARAMETERS ? head : null;
  used += runs?.parameters.length ?? 0;
  const logging = single && events.drafts.length > 0 ? eventsHead(events.drafts, events.now, used + 1) : null;
  const logged = logging && used + logging.parameters.length <= MAX_PARAMETERS ? logging : null;
  used += logged?.parameters.length ?? 0;
  // The commit's log append (document-log.ts `appendHead`), numbered after the rest: one round trip fewer.
  const appendedHere = single && append && used + append.parameters.length <= MAX_PARAMETERS ? { text: append.textFrom(used + 1), parameters: append.parameters } : null;
  // Alone, every other statement this function could send is one too many: the append's, the runs', the index entries', the events'.
  // (Not alone and past reindexHead's bounds, `indexUnindexedRows` finds the entries itself.)
  const holdsEntries = !reindex && reindexed !== 'no entries' && (!alone || holdsIndexEntries(rows));
  if (alone && (!unindex || (append && !appendedHere) || (runChanges.length > 0 && !runs) || (events.drafts.length > 0 && !logged) || holdsEntries)) return null;
  // One that cannot ride goes first, before this function's other writes.
  if (append && !appendedHere) appended = await append.alone();
  if (!runs) await recordRunChanges(db, runChanges, at);
  let recorded: EventRecord[] | null = null;
  for (let from = 0; from < rows.length; from += ROWS_PER_UPSERT) {
    const chunk = rows.slice(from, from + ROWS_PER_UPSERT);
    const parameters: unknown[] = [];
    for (const row of chunk) {
      parameters.push(
        row.id,
        row.workspaceId,
        row.surfaceId,
        row.position,
        // Sync clients may store text Postgres refuses (U+0000); the projection keeps U+FFFD instead.
        JSON.stringify(storableJson(row.data)),
        row.createdBy?.id ?? null,
        row.createdBy?.type ?? null,
        row.updatedBy?.id ?? null,
        row.updatedBy?.type ?? null,
        at,
        at,
      );
    }
    if (unindex) parameters.push(...unindex.parameters);
    if (runs) parameters.push(...runs.parameters);
    if (logged) parameters.push(...logged.parameters);
    if (appendedHere) parameters.push(...appendedHere.parameters);
    const returning = `${UPSERT_RETURNING}${logged ? `, ${LOGGED_EVENTS}` : ''}${appendedHere ? `, ${append!.returning}` : ''}`;
    // With the append's lock of the log heads, the rows are selected once it is taken (before any row of table_rows is): the order of the append's own statement.
    const values =
      appendedHere && append!.locks
        ? `${UPSERT_COLUMNS_HEAD} select * from (values ${valueTuples(chunk.length, UPSERT_COLUMNS, 1, UPSERT_CASTS)}) as v where ${append!.lockedFirst}`
        : `${UPSERT_HEAD}${valueTuples(chunk.length, UPSERT_COLUMNS)}`;
    const text = `${withHeads([appendedHere, unindex, runs, logged])}${values}${UPSERT_TAIL}${returning}`;
    const returned = await runStatement<RowMeta & { loggedEvents?: unknown }>(db, text, parameters);
    if (logged) {
      recorded = recordsOfLogged(events.drafts, returned[0]?.loggedEvents, events.now);
      for (const row of returned) delete row.loggedEvents;
    }
    if (appendedHere) {
      appended = append!.appendedOf(returned[0] as unknown as Record<string, unknown>);
      for (const row of returned as unknown as Array<Record<string, unknown>>) {
        delete row.appendedSeqs;
        delete row.appendedAt;
      }
    }
    for (const row of returned) stored.set(row.id, row);
  }
  // Alone, the rows were found to hold no entry, or the upsert's head wrote them (and it deleted their old ones).
  if (unindex && holdsEntries) await indexUnindexedRows(db, rows);
  else if (!unindex) await indexRows(db, rows);
  return { stored, events: recorded ?? (await insertEvents(db, events.drafts, events.now)), appended };
}

const UPSERT_COLUMNS = 11;
const UPSERT_COLUMNS_HEAD =
  'insert into table_rows (id, workspace_id, surface_id, position, data, created_by_id, created_by_type, updated_by_id, updated_by_type, created_at, updated_at)';
const UPSERT_HEAD = `${UPSERT_COLUMNS_HEAD} values `;
// The column types a `values` list in a subquery does not take from its target.
const UPSERT_CASTS = ['', '', '', '::integer', '::jsonb', '', '', '', '', '::timestamptz', '::timestamptz'];
// A row is its workspace's: another workspace may hold the same (client-chosen) id. The batch's last writer is the editor, or the creator when it only created the row.
const UPSERT_TAIL =
  ' on conflict (workspace_id, id) do update set surface_id = excluded.surface_id, position = excluded.position, data = excluded.data,' +
  ' updated_by_id = coalesce(excluded.updated_by_id, excluded.created_by_id), updated_by_type = coalesce(excluded.updated_by_type, excluded.created_by_type),' +
  ' updated_at = excluded.updated_at returning ';
const UPSERT_RETURNING = 'id, created_by_id, updated_by_id, created_at, updated_at';

/**
 * Makes a workspace's row projection match `rows` (a table document just
 * rebuilt from its log): data, sheet and position are rewritten, rows the
 * document lacks are dropped. Attribution and timestamps stay as they were;
 * a row the projection did not know gets none.
 */
export async function replaceRowProjections(db: Executor, workspaceId: string, rows: ReadonlyArray<Omit<RowProjection, 'workspaceId'>>, at: Date) {
  const keep = new Set(rows.map((row) => row.id));
  const known = await db.selectFrom('tableRows').select('id').where('workspaceId', '=', workspaceId).execute();
  await deleteRowProjections(
    db,
    workspaceId,
    known.map((row) => row.id).filter((id) => !keep.has(id)),
  );
  for (let from = 0; from < rows.length; from += ROWS_PER_UPSERT) {
    await db
      .insertInto('tableRows')
      .values(
        rows.slice(from, from + ROWS_PER_UPSERT).map((row) => ({
          id: row.id,
          workspaceId,
          surfaceId: row.surfaceId,
          position: row.position,
          data: JSON.stringify(storableJson(row.data)),
          createdAt: at,
          updatedAt: at,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['workspaceId', 'id']).doUpdateSet((eb) => ({ surfaceId: eb.ref('excluded.surfaceId'), position: eb.ref('excluded.position'), data: eb.ref('excluded.data') })),
      )
      .execute();
  }
  await reindexWorkspace(db, workspaceId, rows);
}

export async function deleteRowProjections(db: Executor, workspaceId: string, ids: readonly string[]) {
  for (let from = 0; from < ids.length; from += IDS_PER_STATEMENT) {
    await db
      .deleteFrom('tableRows')
      .where('workspaceId', '=', workspaceId)
      .where('id', 'in', ids.slice(from, from + IDS_PER_STATEMENT))
      .execute();
  }
  await unindexRows(db, workspaceId, ids);
}

/** Below Postgres's 65,535 parameters a statement. */
const IDS_PER_STATEMENT = 30_000;

export async function countWorkspaceRows(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('tableRows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Serialises the row-cap count of one workspace across transactions (and
 * instances) until the caller's transaction ends, and reads its org's plan
 * as of now (a raised plan counts at once). NO KEY UPDATE, so inserts that
 * only reference the workspace are not held up.
 */
export async function lockWorkspaceForRowCap(db: Executor, workspaceId: string): Promise<PlanName | null> {
  const { rows } = await sql<{ plan: PlanName }>`
    select o.plan from workspaces w join orgs o on o.id = w.org_id
    where w.id = ${workspaceId} for no key update of w`.execute(db);
  return rows[0]?.plan ?? null;
}

export type RowMeta = {
  id: string;
  createdById: string | null;
  updatedById: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export async function findRowMeta(db: Executor, workspaceId: string, ids: readonly string[]): Promise<Map<string, RowMeta>> {
  const meta = new Map<string, RowMeta>();
  for (let from = 0; from < ids.length; from += IDS_PER_STATEMENT) {
    const rows = await db
      .selectFrom('tableRows')
      .select(['id', 'createdById', 'updatedById', 'createdAt', 'updatedAt'])
      .where('workspaceId', '=', workspaceId)
      .where('id', 'in', ids.slice(from, from + IDS_PER_STATEMENT))
      .execute();
    for (const row of rows) meta.set(row.id, row);
  }
  return meta;
}

/** Which of `ids` the workspace's row projection holds (rows committed and past the cap). */
export async function findProjectedRowIds(db: Executor, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  // Many ids (a table's first read after loading): one scan of the workspace's ids beats a statement full of parameters.
  if (ids.length > 1_000) {
    const all = await db.selectFrom('tableRows').select('id').where('workspaceId', '=', workspaceId).execute();
    const projected = new Set(all.map((row) => row.id));
    return ids.filter((id) => projected.has(id));
  }
  const rows = await db.selectFrom('tableRows').select('id').where('workspaceId', '=', workspaceId).where('id', 'in', ids).execute();
  return rows.map((row) => row.id);
}

export async function findWorkspaceEventContext(db: Executor, workspaceId: string) {
  const workspace = await db
    .selectFrom('workspaces')
    .innerJoin('orgs', 'orgs.id', 'workspaces.orgId')
    .select(['workspaces.id', 'workspaces.slug', 'workspaces.orgId', 'orgs.slug as orgSlug', 'orgs.plan'])
    .where('workspaces.id', '=', workspaceId)
    .executeTakeFirst();
  if (!workspace) return null;
  const surfaces = await db.selectFrom('surfaces').select(['id', 'slug', 'kind']).where('workspaceId', '=', workspaceId).execute();
  return { ...workspace, surfaces: new Map(surfaces.map((s) => [s.id, s])) };
}

