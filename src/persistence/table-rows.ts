import { sql } from 'kysely';
import { storableJson } from '../lib/text';
import type { Executor } from './database';
import type { PlanName, PrincipalKind } from './schema';

/** The row projection the observer keeps: attribution, timestamps, counts and (later) search. */

export type RowProjection = {
  id: string;
  workspaceId: string;
  surfaceId: string;
  position: number;
  data: Record<string, unknown>;
};

export async function upsertRows(
  db: Executor,
  rows: RowProjection[],
  by: { id: string; type: PrincipalKind } | null,
  at: Date,
  createdIds: ReadonlySet<string>,
) {
  for (const row of rows) {
    const created = createdIds.has(row.id);
    // Sync clients may store text Postgres refuses (U+0000); the projection keeps U+FFFD instead.
    const data = JSON.stringify(storableJson(row.data));
    await db
      .insertInto('tableRows')
      .values({
        id: row.id,
        workspaceId: row.workspaceId,
        surfaceId: row.surfaceId,
        position: row.position,
        data,
        createdById: by?.id ?? null,
        createdByType: by?.type ?? null,
        updatedById: created ? null : (by?.id ?? null),
        updatedByType: created ? null : (by?.type ?? null),
        createdAt: at,
        updatedAt: at,
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          surfaceId: row.surfaceId,
          position: row.position,
          data,
          updatedById: by?.id ?? null,
          updatedByType: by?.type ?? null,
          updatedAt: at,
        }),
      )
      .execute();
  }
}

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
    known.map((row) => row.id).filter((id) => !keep.has(id)),
  );
  for (const row of rows) {
    const data = JSON.stringify(storableJson(row.data));
    await db
      .insertInto('tableRows')
      .values({ id: row.id, workspaceId, surfaceId: row.surfaceId, position: row.position, data, createdAt: at, updatedAt: at })
      .onConflict((oc) => oc.column('id').doUpdateSet({ surfaceId: row.surfaceId, position: row.position, data }))
      .execute();
  }
}

export async function deleteRowProjections(db: Executor, ids: string[]) {
  if (ids.length === 0) return;
  await db.deleteFrom('tableRows').where('id', 'in', ids).execute();
}

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

export async function findRowMeta(db: Executor, ids: string[]): Promise<Map<string, RowMeta>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('tableRows')
    .select(['id', 'createdById', 'updatedById', 'createdAt', 'updatedAt'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
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

