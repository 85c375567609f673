import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

/**
 * Workspaces moved as folders (docs/IMPORT-EXPORT.md).
 *
 * - `jobs`: work that runs after its request has been answered (a
 *   workspace import), with its progress and the problems it met, read by
 *   `GET /api/jobs/{id}`. `heartbeat_at` moves while the job runs; a job
 *   whose process died stops moving and reads as failed.
 * - `surfaces.parent_id`: a surface nested under another (a page under
 *   its parent page), kept when a workspace goes out as a folder and comes
 *   back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table jobs (
      id text primary key,
      org_id text not null references orgs(id),
      kind text not null,
      principal_id text not null,
      principal_type text not null,
      status text not null default 'running',
      progress_done integer not null default 0,
      progress_total integer not null default 0,
      workspace_id text references workspaces(id),
      errors jsonb not null default '[]',
      created_at timestamptz not null default now(),
      heartbeat_at timestamptz not null default now(),
      finished_at timestamptz
    )
  `.execute(db);
  await sql`create index jobs_running_by_org on jobs (org_id) where status = 'running'`.execute(db);
  await sql`alter table surfaces add column parent_id text references surfaces(id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table surfaces drop column if exists parent_id`.execute(db);
  await sql`drop table if exists jobs`.execute(db);
}
