import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.

const PRINCIPAL_KIND = `check (%s in ('user', 'agent'))`;
const kind = (column: string) => PRINCIPAL_KIND.replace('%s', column);

const STATEMENTS = [
  // Folders of a files surface. `archived_with_id` names the folder whose
  // archive took this one along (null when it was archived by itself).
  `create table file_folders (
     id text primary key,
     workspace_id text not null references workspaces(id) on delete cascade,
     surface_id text not null references surfaces(id) on delete cascade,
     parent_folder_id text references file_folders(id) on delete cascade,
     name text not null,
     created_at timestamptz not null default now(),
     created_by_id text,
     created_by_type text ${kind('created_by_type')},
     updated_at timestamptz not null default now(),
     archived_at timestamptz,
     archived_by_id text,
     archived_by_type text ${kind('archived_by_type')},
     archived_with_id text
   )`,
  `create index file_folders_parent_idx on file_folders (surface_id, parent_folder_id)`,
  `create index file_folders_archived_idx on file_folders (archived_at) where archived_at is not null`,

  // Files: the record of the current version. `blob_key` and `sha256` change
  // with each version; `thumb_key` names the 256-px webp of raster images.
  `create table files (
     id text primary key,
     org_id text not null references orgs(id) on delete cascade,
     workspace_id text not null references workspaces(id) on delete cascade,
     surface_id text not null references surfaces(id) on delete cascade,
     parent_folder_id text references file_folders(id) on delete set null,
     name text not null,
     size bigint not null check (size > 0),
     content_type text not null,
     blob_key text not null unique,
     thumb_key text,
     sha256 text not null,
     exif jsonb,
     version integer not null default 1,
     starred boolean not null default false,
     starred_at timestamptz,
     description text,
     tags jsonb not null default '[]'::jsonb,
     created_at timestamptz not null default now(),
     created_by_id text,
     created_by_type text ${kind('created_by_type')},
     updated_at timestamptz not null default now(),
     updated_by_id text,
     updated_by_type text ${kind('updated_by_type')},
     archived_at timestamptz,
     archived_by_id text,
     archived_by_type text ${kind('archived_by_type')},
     archived_with_folder_id text
   )`,
  `create index files_folder_idx on files (surface_id, parent_folder_id)`,
  `create index files_archived_idx on files (archived_at) where archived_at is not null`,

  // Share links: the token is kept (not only its hash) so the list can show
  // the URL again; it grants read of one file and nothing else.
  `create table file_share_tokens (
     id text primary key,
     file_id text not null references files(id) on delete cascade,
     token text not null unique,
     created_at timestamptz not null default now(),
     created_by_id text,
     created_by_type text ${kind('created_by_type')},
     revoked_at timestamptz
   )`,
  `create index file_share_tokens_file_idx on file_share_tokens (file_id)`,

  // Direct uploads between the handshake and completion.
  `create table file_uploads (
     id text primary key,
     token_hash text not null,
     org_id text not null references orgs(id) on delete cascade,
     workspace_id text not null references workspaces(id) on delete cascade,
     surface_id text not null references surfaces(id) on delete cascade,
     parent_folder_id text,
     name text not null,
     size bigint not null,
     content_type text not null,
     blob_key text not null unique,
     reservation_id text not null,
     state text not null default 'pending' check (state in ('pending', 'receiving', 'completed')),
     file_id text,
     created_by_id text not null,
     created_by_type text not null ${kind('created_by_type')},
     created_at timestamptz not null default now(),
     expires_at timestamptz not null
   )`,
  `create index file_uploads_expires_idx on file_uploads (expires_at)`,

  // Storage per organisation: one counter moved by conditional updates, so
  // concurrent uploads cannot pass the cap. `quota_bytes` overrides the
  // plan's cap (a granted increase); null means the plan decides.
  `create table org_storage (
     org_id text primary key references orgs(id) on delete cascade,
     used_bytes bigint not null default 0 check (used_bytes >= 0),
     quota_bytes bigint check (quota_bytes >= 0)
   )`,
  // Bytes held for an upload in flight, with the blob keys it may leave
  // behind: an expired reservation is released and its blobs deleted.
  `create table storage_reservations (
     id text primary key,
     org_id text not null references orgs(id) on delete cascade,
     bytes bigint not null check (bytes >= 0),
     blob_keys jsonb not null default '[]'::jsonb,
     created_at timestamptz not null default now(),
     expires_at timestamptz not null
   )`,
  `create index storage_reservations_expires_idx on storage_reservations (expires_at)`,
  // Every counted blob (files, thumbnails, doc images, avatars, support
  // screenshots): the counter equals the sum of these plus live reservations.
  `create table stored_blobs (
     key text primary key,
     org_id text not null references orgs(id) on delete cascade,
     size bigint not null check (size >= 0),
     kind text not null,
     created_at timestamptz not null default now()
   )`,
  `create index stored_blobs_org_idx on stored_blobs (org_id)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['stored_blobs', 'storage_reservations', 'org_storage', 'file_uploads', 'file_share_tokens', 'files', 'file_folders']) {
    await sql.raw(`drop table if exists ${table}`).execute(db);
  }
}
