import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Agent runs (issue 35, docs/RUNS.md).
 *
 * - `runs`: one unit of a principal's work in a workspace. `automatic` runs
 *   are opened for an API key or OAuth grant (`actor_key`) that names no run
 *   and end after 15 minutes without writes; `reverts` names the run a revert
 *   undid. `last_write_at` is when a change of the run was last derived.
 * - `run_changes`: what each run changed, in order, recorded when the run's
 *   updates are derived (in the transaction that marks them derived), so it
 *   outlives compaction, restarts and version restores: row creations,
 *   deletions, moves and cell values before and after, column definitions,
 *   doc and html text inserted (Y item ids) and deleted (the text and where
 *   it was), files and comments. `change` is JSON; `seq` orders a run's
 *   changes.
 * - `document_updates.run_id`: the run each logged update joined.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table runs (
      id text primary key,
      workspace_id text not null references workspaces(id) on delete cascade,
      name text not null,
      principal_type text not null,
      principal_id text not null,
      actor_key text,
      automatic boolean not null default false,
      reverts text,
      started_at timestamptz not null,
      ended_at timestamptz,
      last_write_at timestamptz
    )
  `.execute(db);
  await sql`create index runs_by_workspace on runs (workspace_id, started_at desc, id desc)`.execute(db);
  await sql`create index runs_open_automatic on runs (workspace_id, actor_key) where automatic and ended_at is null`.execute(db);
  await sql`create index runs_reverting on runs (reverts) where reverts is not null`.execute(db);
  await sql`
    create table run_changes (
      run_id text not null references runs(id) on delete cascade,
      seq bigint generated always as identity,
      document text not null,
      surface_id text,
      kind text not null,
      change jsonb not null,
      primary key (run_id, seq)
    )
  `.execute(db);
  await sql`alter table document_updates add column run_id text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table document_updates drop column if exists run_id`.execute(db);
  await sql`drop table if exists run_changes`.execute(db);
  await sql`drop table if exists runs`.execute(db);
}
