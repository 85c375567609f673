import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Calendar and timeline windows, attachment cells and public forms (issue 37).
 *
 * - `row_dates`: every cell of the row projection that holds an ISO 8601
 *   date, as an instant, so a window of days is answered from an index
 *   rather than by reading every row. `reach_days` is how many days later
 *   the latest date the row holds is (a range's end column among them), and
 *   `span_class` the power of two that bounds it: a window's rows are then
 *   a few bounded range scans, one per class (src/persistence/row-indexes.ts).
 * - `row_files`: which rows name which files (attachment cells), so a file
 *   uploaded into a cell can be put in the trash once no row names it.
 * - `form_links`: the public token of a form view, made when it is first
 *   read open and kept (closing and opening again keeps the address).
 * - `files.cell_upload`: the file was uploaded into a cell (or a form), not
 *   into the drive.
 * - File attribution may name a form, which uploads files for the people
 *   who answer it.
 */

const STATEMENTS = [
  `create table row_dates (
     workspace_id text not null references workspaces(id) on delete cascade,
     row_id text not null,
     column_key text not null,
     at timestamptz not null,
     reach_days integer not null check (reach_days >= 0),
     span_class smallint not null,
     primary key (workspace_id, row_id, column_key)
   )`,
  `create index row_dates_window_idx on row_dates (workspace_id, column_key, span_class, at)`,
  `create table row_files (
     workspace_id text not null references workspaces(id) on delete cascade,
     row_id text not null,
     file_id text not null,
     primary key (workspace_id, row_id, file_id)
   )`,
  `create index row_files_file_idx on row_files (workspace_id, file_id)`,
  `create table form_links (
     token text primary key,
     workspace_id text not null references workspaces(id) on delete cascade,
     view_id text not null,
     created_at timestamptz not null default now(),
     unique (workspace_id, view_id)
   )`,
  `alter table files add column cell_upload boolean not null default false`,
  `create index files_cell_upload_idx on files (workspace_id) where cell_upload and archived_at is null`,
  `alter table files drop constraint if exists files_created_by_type_check`,
  `alter table files add constraint files_created_by_type_check check (created_by_type in ('user', 'agent', 'form'))`,
  `alter table files drop constraint if exists files_updated_by_type_check`,
  `alter table files add constraint files_updated_by_type_check check (updated_by_type in ('user', 'agent', 'form'))`,
];

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/;
const FILE_ID = /^fil_[0-9A-Za-z]{1,64}$/;
const DAY = 86_400_000;

/** The instant of an ISO date or date-time cell (a date is its UTC midnight), or null. */
function instantOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = ISO_DATE.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  const at = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  // Postgres has no year 0: such dates are not indexed.
  return Number.isFinite(at) && at >= Date.parse('0001-01-01T00:00:00Z') ? at : null;
}

function spanClass(reachDays: number): number {
  return reachDays === 0 ? 0 : Math.floor(Math.log2(reachDays)) + 1;
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
  // The rows already projected, a page at a time by their key.
  let after: { workspaceId: string; id: string } | null = null;
  for (;;) {
    // One-word aliases: the same names with or without a plugin that renames result columns.
    const page: Array<{ workspace: string; id: string; data: Record<string, unknown> }> = (
      await sql<{ workspace: string; id: string; data: Record<string, unknown> }>`
        select workspace_id as workspace, id, data from table_rows
        ${after ? sql`where (workspace_id, id) > (${after.workspaceId}, ${after.id})` : sql``}
        order by workspace_id, id limit 1000`.execute(db)
    ).rows;
    if (page.length === 0) break;
    const dates: unknown[][] = [];
    const files: unknown[][] = [];
    for (const row of page) {
      const data = typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data;
      const instants = Object.entries(data ?? {}).flatMap(([key, value]) => {
        const at = instantOf(value);
        return at === null ? [] : [{ key, at }];
      });
      const latest = Math.max(...instants.map((entry) => entry.at));
      for (const { key, at } of instants) {
        const reach = Math.ceil((latest - at) / DAY);
        dates.push([row.workspace, row.id, key, new Date(at).toISOString(), reach, spanClass(reach)]);
      }
      const ids = new Set(Object.values(data ?? {}).flatMap((value) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && FILE_ID.test(item)) : [])));
      for (const id of ids) files.push([row.workspace, row.id, id]);
    }
    if (dates.length) {
      await sql`insert into row_dates (workspace_id, row_id, column_key, at, reach_days, span_class) values ${sql.join(dates.map((values) => sql`(${sql.join(values)})`))}`.execute(db);
    }
    if (files.length) await sql`insert into row_files (workspace_id, row_id, file_id) values ${sql.join(files.map((values) => sql`(${sql.join(values)})`))}`.execute(db);
    const last = page[page.length - 1]!;
    after = { workspaceId: last.workspace, id: last.id };
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table files drop constraint if exists files_created_by_type_check`.execute(db);
  await sql`alter table files add constraint files_created_by_type_check check (created_by_type in ('user', 'agent'))`.execute(db);
  await sql`alter table files drop constraint if exists files_updated_by_type_check`.execute(db);
  await sql`alter table files add constraint files_updated_by_type_check check (updated_by_type in ('user', 'agent'))`.execute(db);
  await sql`alter table files drop column if exists cell_upload`.execute(db);
  await sql`drop table if exists form_links, row_files, row_dates`.execute(db);
}
