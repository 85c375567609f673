import { sql } from 'kysely';
import { storableText } from '../lib/text';
import { dateInstant } from '../model/table/windows';
import type { Executor } from './database';
import { parameterList, runStatement, valueTuples, type StatementHead } from './raw-statements';

/**
 * Two indexes beside the row projection, kept in the same statements'
 * transaction as it (src/persistence/table-rows.ts): the date cells of each
 * row (`row_dates`), for calendar and timeline windows, and the files each
 * row names (`row_files`), for attachment files no row uses any more. Both
 * are read from the cells alone, whatever their column's type: a string that
 * is an ISO 8601 date, a string in an array that is a file id. A reader asks
 * by column key and checks what it gets against the table document.
 *
 * A window of days over one start column is a few bounded range scans of
 * `(workspace_id, column_key, span_class, at)`: each date entry records how
 * many days on the row's latest date is (`reach_days`; a range's end is
 * among them) and the power of two above it (`span_class`), so a row whose
 * start and end overlap [from, to) starts after `from - 2^class` days. The
 * entries a scan finds are a superset (the reach is to the row's latest
 * date of any column); the caller keeps the rows that truly overlap.
 */

const DAY = 86_400_000;
/** Classes 0..23: reach up to 2^23 days, far past the 3.65 million days between years 0000 and 9999. */
const SPAN_CLASSES = 24;
const FILE_ID = /^fil_[0-9A-Za-z]{1,64}$/;
/** The first instant Postgres and JavaScript both write alike (Postgres has no year 0): earlier dates are not indexed. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
// Six parameters a date entry; Postgres allows 65,535 a statement.
const ENTRIES_PER_INSERT = 5_000;
const IDS_PER_STATEMENT = 30_000;
// The column types a `values` list in a subquery does not take from its target (reindexHead).
const DATE_CASTS = ['::text', '::text', '::timestamptz', '::integer', '::smallint'];

export type IndexedRow = { id: string; workspaceId: string; data: Record<string, unknown> };

function spanClass(reachDays: number): number {
  return reachDays === 0 ? 0 : Math.min(SPAN_CLASSES - 1, Math.floor(Math.log2(reachDays)) + 1);
}

/** Replaces the index entries of these rows with what their cells hold now. */
export async function indexRows(db: Executor, rows: readonly IndexedRow[]): Promise<void> {
  if (rows.length === 0) return;
  const byWorkspace = new Map<string, string[]>();
  for (const row of rows) {
    const ids = byWorkspace.get(row.workspaceId);
    if (ids) ids.push(row.id);
    else byWorkspace.set(row.workspaceId, [row.id]);
  }
  for (const [workspaceId, ids] of byWorkspace) await unindexRows(db, workspaceId, ids);
  await insertEntries(db, rows);
}

/** Rebuilds a workspace's index entries from `rows`, every row it holds (a table document rebuilt from its log). */
export async function reindexWorkspace(db: Executor, workspaceId: string, rows: ReadonlyArray<Omit<IndexedRow, 'workspaceId'>>): Promise<void> {
  await unindexWorkspace(db, workspaceId);
  await insertEntries(db, rows.map((row) => ({ ...row, workspaceId })));
}

/**
 * The delete of these rows' index entries as the head (`with ...`) of
 * another statement on the same rows (the row projection's upsert carries
 * it: a round trip fewer in every commit that writes rows), its parameters
 * numbered from `first`: the workspace, then the ids. Null for rows of
 * several workspaces or more than one statement holds: `indexRows` then.
 * The statement's caller follows it with `indexUnindexedRows`.
 */
export function unindexHead(rows: readonly IndexedRow[], first: number): StatementHead | null {
  const workspaceId = rows[0]?.workspaceId;
  if (workspaceId === undefined || rows.length > IDS_PER_STATEMENT || rows.some((row) => row.workspaceId !== workspaceId)) return null;
  const list = parameterList(rows.length, first + 1);
  return {
    text: `dates as (delete from row_dates where workspace_id = $${first} and row_id in (${list})), files as (delete from row_files where workspace_id = $${first} and row_id in (${list}))`,
    parameters: [workspaceId, ...rows.map((row) => row.id)],
  };
}

/**
 * The whole of `indexRows` for these rows as the head of another statement on
 * the same rows (the row projection's upsert), its parameters numbered from
 * `first`: the old entries a cell no longer holds are deleted, and the
 * entries the cells hold now are inserted or updated in place. The delete
 * spares the entries the inserts write, so no entry is touched twice in the
 * one statement (its parts share one snapshot and may not modify one row
 * twice). Null where `unindexHead` is (rows of several workspaces, too many
 * ids) or when the entries would take more than `room` parameters:
 * `unindexHead` and `indexUnindexedRows` then; 'no entries' when the rows
 * hold none (`unindexHead` alone is their whole reindex). Rows the head
 * wrote need no `indexUnindexedRows`.
 */
export function reindexHead(rows: readonly IndexedRow[], first: number, room: number): StatementHead | 'no entries' | null {
  const workspaceId = rows[0]?.workspaceId;
  if (workspaceId === undefined || rows.length > IDS_PER_STATEMENT || rows.some((row) => row.workspaceId !== workspaceId)) return null;
  const { dates, files } = entriesOf(rows);
  if (dates.length === 0 && files.length === 0) return 'no entries';
  const count = 1 + rows.length + dates.length * 5 + files.length * 2;
  if (count > room) return null;
  const parameters: unknown[] = [workspaceId, ...rows.map((row) => row.id)];
  const ws = `$${first}`;
  const list = parameterList(rows.length, first + 1);
  let next = first + 1 + rows.length;
  const heads: string[] = [];
  if (dates.length > 0) {
    // (row_id, column_key, at, reach_days, span_class): the kept pairs are the first two of each tuple.
    const tuples = valueTuples(dates.length, 5, next, DATE_CASTS);
    const kept = dates.map((_, n) => `($${next + n * 5}, $${next + n * 5 + 1})`).join(', ');
    for (const entry of dates) parameters.push(entry.rowId, entry.columnKey, entry.at, entry.reachDays, entry.spanClass);
    next += dates.length * 5;
    heads.push(
      `dates as (delete from row_dates where workspace_id = ${ws} and row_id in (${list}) and (row_id, column_key) not in (${kept}))`,
      `dated as (insert into row_dates (workspace_id, row_id, column_key, at, reach_days, span_class) select ${ws}::text, v.* from (values ${tuples}) as v (row_id, column_key, at, reach_days, span_class)` +
        ' on conflict (workspace_id, row_id, column_key) do update set at = excluded.at, reach_days = excluded.reach_days, span_class = excluded.span_class)',
    );
  } else heads.push(`dates as (delete from row_dates where workspace_id = ${ws} and row_id in (${list}))`);
  if (files.length > 0) {
    const tuples = valueTuples(files.length, 2, next);
    for (const entry of files) parameters.push(entry.rowId, entry.fileId);
    heads.push(
      `files as (delete from row_files where workspace_id = ${ws} and row_id in (${list}) and (row_id, file_id) not in (${tuples}))`,
      `filed as (insert into row_files (workspace_id, row_id, file_id) select ${ws}::text, v.* from (values ${tuples}) as v (row_id, file_id) on conflict do nothing)`,
    );
  } else heads.push(`files as (delete from row_files where workspace_id = ${ws} and row_id in (${list}))`);
  return { text: heads.join(', '), parameters };
}

/** `indexRows` for rows whose old entries a statement headed by `unindexHead` deleted. */
export function indexUnindexedRows(db: Executor, rows: readonly IndexedRow[]): Promise<void> {
  return insertEntries(db, rows);
}

/** Whether `indexRows` or `indexUnindexedRows` would write an entry for these rows (a date or a file id in a cell): a statement of its own. */
export function holdsIndexEntries(rows: readonly IndexedRow[]): boolean {
  const { dates, files } = entriesOf(rows);
  return dates.length > 0 || files.length > 0;
}

/** The date and file entries of rows, as `insertEntries` writes them. */
function entriesOf(rows: readonly IndexedRow[]) {
  const dates: Array<{ workspaceId: string; rowId: string; columnKey: string; at: Date; reachDays: number; spanClass: number }> = [];
  const files: Array<{ workspaceId: string; rowId: string; fileId: string }> = [];
  for (const row of rows) {
    const instants: Array<{ key: string; at: number }> = [];
    const named = new Set<string>();
    for (const [key, value] of Object.entries(row.data)) {
      const at = dateInstant(value);
      if (at !== null && at >= EARLIEST) instants.push({ key: storableText(key), at });
      if (Array.isArray(value)) for (const item of value) if (typeof item === 'string' && FILE_ID.test(item)) named.add(item);
    }
    let latest = -Infinity;
    for (const { at } of instants) latest = Math.max(latest, at);
    for (const { key, at } of instants) {
      const reachDays = Math.ceil((latest - at) / DAY);
      dates.push({ workspaceId: row.workspaceId, rowId: row.id, columnKey: key, at: new Date(at), reachDays, spanClass: spanClass(reachDays) });
    }
    for (const fileId of named) files.push({ workspaceId: row.workspaceId, rowId: row.id, fileId });
  }
  return { dates, files };
}

/** The entries of rows that have none yet (their old ones deleted by the caller). */
async function insertEntries(db: Executor, rows: readonly IndexedRow[]): Promise<void> {
  const { dates, files } = entriesOf(rows);
  // On conflict: two commits of one row at once (two instances over Redis, two people on one row). The second's delete,
  // its snapshot older than the first's commit, leaves the entries the first inserted, and its insert met them on the
  // primary key: its whole commit failed. Its entries now replace them. An entry of a cell only the first commit's
  // row had stays until the row's next write: a date window's rows are a superset its caller checks against the
  // document, and a file named too long is kept, never lost.
  for (let from = 0; from < dates.length; from += ENTRIES_PER_INSERT) {
    await db
      .insertInto('rowDates')
      .values(dates.slice(from, from + ENTRIES_PER_INSERT))
      .onConflict((oc) =>
        oc.columns(['workspaceId', 'rowId', 'columnKey']).doUpdateSet((eb) => ({ at: eb.ref('excluded.at'), reachDays: eb.ref('excluded.reachDays'), spanClass: eb.ref('excluded.spanClass') })),
      )
      .execute();
  }
  for (let from = 0; from < files.length; from += ENTRIES_PER_INSERT) {
    await db
      .insertInto('rowFiles')
      .values(files.slice(from, from + ENTRIES_PER_INSERT))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

export async function unindexRows(db: Executor, workspaceId: string, ids: readonly string[]): Promise<void> {
  for (let from = 0; from < ids.length; from += IDS_PER_STATEMENT) {
    const chunk = ids.slice(from, from + IDS_PER_STATEMENT);
    const list = parameterList(chunk.length, 2);
    // One statement for both indexes (a round trip fewer in every commit that writes rows), written out: it runs in every such commit.
    await runStatement(db, `with dates as (delete from row_dates where workspace_id = $1 and row_id in (${list})) delete from row_files where workspace_id = $1 and row_id in (${list})`, [
      workspaceId,
      ...chunk,
    ]);
  }
}

export async function unindexWorkspace(db: Executor, workspaceId: string): Promise<void> {
  await db.deleteFrom('rowDates').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('rowFiles').where('workspaceId', '=', workspaceId).execute();
}

/**
 * Ids of the rows whose `startKey` date falls in [from, to), or, with
 * `reach`, whose span from that date to their latest date overlaps it: a
 * superset of the rows of a window, for the caller to check exactly.
 */
export async function findRowsInWindow(db: Executor, workspaceId: string, window: { startKey: string; from: Date; to: Date; reach: boolean }): Promise<string[]> {
  const key = storableText(window.startKey);
  const scans = Array.from({ length: SPAN_CLASSES }, (_, spanClass) => {
    // Entries of this class reach less than 2^class days past their date.
    const lower = new Date(Math.max(EARLIEST, window.reach ? window.from.getTime() - 2 ** spanClass * DAY : window.from.getTime()));
    return sql<{ id: string }>`(select row_id as id from row_dates where workspace_id = ${workspaceId} and column_key = ${key} and span_class = ${spanClass} and at >= ${lower} and at < ${window.to})`;
  });
  const { rows } = await sql<{ id: string }>`${sql.join(scans, sql` union all `)}`.execute(db);
  return [...new Set(rows.map((row) => row.id))];
}

/** Which of `fileIds` some row of the workspace names. */
export async function filesNamedByRows(db: Executor, workspaceId: string, fileIds: readonly string[]): Promise<Set<string>> {
  if (fileIds.length === 0) return new Set();
  const rows = await db.selectFrom('rowFiles').select('fileId').distinct().where('workspaceId', '=', workspaceId).where('fileId', 'in', fileIds).execute();
  return new Set(rows.map((row) => row.fileId));
}
