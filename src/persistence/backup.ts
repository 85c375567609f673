import { sql } from 'kysely';
import type { Db, Executor, Tx } from './database';

/**
 * The database as a logical dump both dialects load: one JSON object per row,
 * made by Postgres itself (`row_to_json`) and read back by it
 * (`json_populate_recordset`), so every type survives exactly as stored:
 * microsecond timestamps, int8 beyond 2^53, bytea (as `\x` hex), jsonb and
 * arrays. Going through Kysely's parsed values would round timestamps to
 * milliseconds and int8 to doubles.
 *
 * The Y documents' update logs are tables like any other, so documents come
 * back with their whole history.
 */

/** Kysely's own bookkeeping: written by the migrator, never dumped. */
const MIGRATION_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

export type DumpTable = {
  name: string;
  /** Columns a load writes: generated columns are left to the database. */
  columns: string[];
  /** Has an identity column: loads keep its values and move its sequence past them. */
  identity: string[];
  /** Foreign keys to the table itself (a reply's parent comment, a folder's parent): rows are dumped parents first. */
  selfReferences: Array<{ column: string; references: string }>;
};

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The application's tables, every table after the tables it references. */
export async function listTables(db: Executor): Promise<DumpTable[]> {
  const tables = await sql<{ name: string }>`
    select c.relname as name from pg_class c
    where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
    order by c.relname`.execute(db);
  const columns = await sql<{ table: string; column: string; generated: string; identity: string }>`
    select table_name as table, column_name as column, is_generated as generated, is_identity as identity
    from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position`.execute(db);
  const keys = await sql<{ child: string; parent: string; childColumns: string[]; parentColumns: string[] }>`
    select cc.relname as child, pc.relname as parent,
      array(select a.attname::text from unnest(k.conkey) with ordinality u(n, i) join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.n order by u.i) as child_columns,
      array(select a.attname::text from unnest(k.confkey) with ordinality u(n, i) join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.n order by u.i) as parent_columns
    from pg_constraint k
    join pg_class cc on cc.oid = k.conrelid
    join pg_class pc on pc.oid = k.confrelid
    where k.contype = 'f' and k.connamespace = 'public'::regnamespace`.execute(db);

  const byName = new Map<string, DumpTable>();
  for (const { name } of tables.rows) {
    if (MIGRATION_TABLES.has(name)) continue;
    byName.set(name, { name, columns: [], identity: [], selfReferences: [] });
  }
  for (const c of columns.rows) {
    const table = byName.get(c.table);
    if (!table) continue;
    if (c.generated === 'ALWAYS') continue;
    table.columns.push(c.column);
    if (c.identity === 'YES') table.identity.push(c.column);
  }
  const parents = new Map<string, Set<string>>([...byName.keys()].map((name) => [name, new Set<string>()]));
  for (const k of keys.rows) {
    if (!byName.has(k.child) || !byName.has(k.parent)) continue;
    if (k.child === k.parent) {
      if (k.childColumns.length !== 1) throw new Error(`Cannot order the rows of ${k.child}: a self-reference over several columns.`);
      byName.get(k.child)!.selfReferences.push({ column: k.childColumns[0]!, references: k.parentColumns[0]! });
    } else {
      parents.get(k.child)!.add(k.parent);
    }
  }
  // Depth-first topological order; names sorted so the order is the same on every database.
  const ordered: DumpTable[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`Foreign keys form a cycle: ${[...path, name].join(' -> ')}`);
    state.set(name, 'visiting');
    for (const parent of [...parents.get(name)!].sort()) visit(parent, [...path, name]);
    state.set(name, 'done');
    ordered.push(byName.get(name)!);
  };
  for (const name of [...byName.keys()].sort()) visit(name, []);
  return ordered;
}

/** The names of the migrations applied to this database, sorted; empty for a database never migrated. */
export async function appliedMigrations(db: Executor): Promise<string[]> {
  const exists = await sql<{ found: boolean }>`select to_regclass('public.kysely_migration') is not null as found`.execute(db);
  if (!exists.rows[0]?.found) return [];
  const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.rows.map((r) => r.name);
}

export type DumpSink = {
  /** Called once per table, in dependency order, before its rows. */
  table(table: DumpTable): Promise<void>;
  /** One row as a JSON object (Postgres' own text of it). */
  row(table: DumpTable, line: string): Promise<void>;
};

/**
 * Dumps every application table inside one read-only repeatable-read
 * transaction: on Postgres a snapshot that writers keep going around, on
 * PGlite the dialect's one-session lock, which holds writers until the
 * dump is done. Rows stream through a cursor, so a large log is never
 * held whole (except the self-referencing tables, sorted parents first).
 */
export async function dumpDatabase(db: Db, sink: DumpSink): Promise<{ migrations: string[]; tables: Array<{ name: string; rows: number }> }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (tx) => {
      const migrations = await appliedMigrations(tx);
      const tables = await listTables(tx);
      const counts: Array<{ name: string; rows: number }> = [];
      for (const table of tables) {
        await sink.table(table);
        let rows = 0;
        if (table.selfReferences.length > 0) {
          const all = await sql<{ j: string }>`select row_to_json(t)::text as j from ${sql.raw(quote(table.name))} t`.execute(tx);
          for (const line of parentsFirst(all.rows.map((r) => r.j), table)) {
            await sink.row(table, line);
            rows++;
          }
        } else {
          await sql`declare backup_rows no scroll cursor for select row_to_json(t)::text as j from ${sql.raw(quote(table.name))} t`.execute(tx);
          for (;;) {
            const batch = await sql<{ j: string }>`fetch forward 500 from backup_rows`.execute(tx);
            if (batch.rows.length === 0) break;
            for (const r of batch.rows) {
              await sink.row(table, r.j);
              rows++;
            }
          }
          await sql`close backup_rows`.execute(tx);
        }
        counts.push({ name: table.name, rows });
      }
      return { migrations, tables: counts };
    });
}

/** Rows ordered so each row comes after the row it references in its own table. */
function parentsFirst(lines: string[], table: DumpTable): string[] {
  const rows = lines.map((line) => ({ line, value: JSON.parse(line) as Record<string, unknown> }));
  const placed = new Set<string>();
  const key = (ref: string, v: unknown) => `${ref}\u0000${String(v)}`;
  const present = new Set(rows.flatMap((r) => table.selfReferences.map(({ references }) => key(references, r.value[references]))));
  const out: string[] = [];
  let pending = rows;
  while (pending.length > 0) {
    const next: typeof rows = [];
    for (const row of pending) {
      const ready = table.selfReferences.every(({ column, references }) => {
        const target = row.value[column];
        return target === null || target === undefined || placed.has(key(references, target)) || !present.has(key(references, target));
      });
      if (!ready) {
        next.push(row);
        continue;
      }
      out.push(row.line);
      for (const { references } of table.selfReferences) placed.add(key(references, row.value[references]));
    }
    if (next.length === pending.length) throw new Error(`Rows of ${table.name} reference each other in a cycle.`);
    pending = next;
  }
  return out;
}

/** Rows per table; a store is empty when every application table is. */
export async function countRows(db: Executor): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await listTables(db)) {
    const result = await sql<{ n: number }>`select count(*)::int as n from ${sql.raw(quote(table.name))}`.execute(db);
    counts[table.name] = Number(result.rows[0]!.n);
  }
  return counts;
}

/** Empties every application table (restore --force), identities restarted. */
export async function emptyTables(tx: Tx): Promise<void> {
  const tables = await listTables(tx);
  if (tables.length === 0) return;
  await sql`truncate ${sql.raw(tables.map((t) => quote(t.name)).join(', '))} restart identity cascade`.execute(tx);
}

/** Inserts rows given as the JSON lines `dumpDatabase` wrote, in batches. */
export async function loadRows(tx: Tx, table: DumpTable, lines: string[]): Promise<void> {
  if (lines.length === 0) return;
  const columns = table.columns.map(quote).join(', ');
  const overriding = table.identity.length > 0 ? sql.raw('overriding system value') : sql.raw('');
  await sql`insert into ${sql.raw(quote(table.name))} (${sql.raw(columns)}) ${overriding}
    select ${sql.raw(columns)} from json_populate_recordset(null::${sql.raw(quote(table.name))}, ${`[${lines.join(',')}]`}::json)`.execute(tx);
}

/** Moves each identity past the loaded values, so the next insert does not collide. */
export async function resetIdentities(tx: Tx, tables: DumpTable[]): Promise<void> {
  for (const table of tables) {
    for (const column of table.identity) {
      await sql`select setval(pg_get_serial_sequence(${quote(table.name)}, ${column}), coalesce((select max(${sql.raw(quote(column))}) from ${sql.raw(quote(table.name))}), 0) + 1, false)`.execute(tx);
    }
  }
}
