import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../src/persistence/database';

/**
 * The search query as it was before issue 21 goal 4 (every match read, counted and scored),
 * kept for `npm run bench -- search` to time against the bounded one in the same run.
 *
 * Search over the projections: workspace names, row cell text and doc
 * sections (heading and text), through `table_rows.search_text` and the
 * sections' searched parts (migrations 0040 and 0190: short queries only). Matching is `ILIKE '%q%'`, served by the trigram indexes; the
 * caller has already decided which workspaces may be searched.
 */

export type SearchKind = 'workspace' | 'row' | 'doc-section';

export type SearchMatch = {
  kind: SearchKind;
  /** Workspace id, row id, or `surfaceId:index` for a doc section. */
  ref: string;
  score: number;
  updatedAt: Date;
  workspaceId: string;
  workspaceSlug: string;
  workspaceName: string;
  workspaceMode: 'table' | 'doc';
  orgSlug: string;
  orgName: string;
  surfaceId: string | null;
  surfaceSlug: string | null;
  /** The searched text: the name, the row's cells one per line, or the section's heading and text. */
  text: string;
  /** Rows: the cells. */
  rowData: Record<string, unknown> | null;
  /** Doc sections: the heading (null before the first one) and index. */
  heading: string | null;
  sectionIndex: number | null;
};

export type SearchQuery = {
  workspaceIds: string[];
  /** The text to find, as typed (not yet escaped). */
  text: string;
  kinds: ReadonlySet<SearchKind>;
  limit: number;
  offset: number;
};

/** `%`, `_` and the escape character itself match literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const NL = sql`chr(10)`;

/**
 * 1 when a whole field (name, cell, heading or line) equals the query, 0.9
 * when one starts with it, else 0.5 to 0.9 by the share of the text the
 * query covers. `framed` is the lower-cased text between newlines, computed
 * once per match.
 */
function score(needle: string): RawBuilder<number> {
  return sql<number>`case
    when strpos(framed, ${NL} || ${needle} || ${NL}) > 0 then 1.0
    when strpos(framed, ${NL} || ${needle}) > 0 then 0.9
    else 0.5 + 0.4 * least(1.0, length(${needle})::float8 / greatest(length(framed) - 2, 1))
  end`;
}

/** The page of matches (best first, ties newest first) and how many there are in all. */
export async function searchProjectionsExact(db: Executor, query: SearchQuery): Promise<{ matches: SearchMatch[]; count: number }> {
  if (query.workspaceIds.length === 0 || query.kinds.size === 0) return { matches: [], count: 0 };
  const pattern = `%${escapeLike(query.text)}%`;
  const needle = query.text.toLowerCase();
  // A join, not `= any(...)`: when the caller reaches most workspaces the planner hashes the list
  // against the trigram matches instead of intersecting with a scan of the workspace index.
  const allowed = sql`unnest(${query.workspaceIds}::text[]) as allowed(id)`;

  // Every part names its columns: the union takes the first part's names, and any part may be first.
  // Deleted surfaces keep their projection rows until cleaned up; they are not found.
  const parts: RawBuilder<unknown>[] = [];
  if (query.kinds.has('workspace')) {
    parts.push(sql`
      select 'workspace' as kind, w.id as ref, w.id as workspace_id, null::text as surface_id, null::text as surface_slug, null::integer as idx, w.name as text, w.updated_at
      from workspaces w join ${allowed} on allowed.id = w.id
      where w.name ilike ${pattern}`);
  }
  if (query.kinds.has('row')) {
    parts.push(sql`
      select 'row' as kind, r.id as ref, r.workspace_id, r.surface_id, s.slug as surface_slug, null::integer as idx, r.search_text as text, r.updated_at
      from table_rows r
      join ${allowed} on allowed.id = r.workspace_id
      join surfaces s on s.id = r.surface_id and s.deleted_at is null
      where r.search_text ilike ${pattern}`);
  }
  if (query.kinds.has('doc-section')) {
    parts.push(sql`
      select 'doc-section' as kind, ds.surface_id || ':' || ds.idx as ref, ds.workspace_id, ds.surface_id, s.slug as surface_slug, ds.idx, coalesce(ds.heading, '') || chr(10) || ds.text as text, ds.updated_at
      from doc_sections ds
      join ${allowed} on allowed.id = ds.workspace_id
      join surfaces s on s.id = ds.surface_id and s.deleted_at is null
      where exists (select 1 from doc_section_parts p where p.surface_id = ds.surface_id and p.idx = ds.idx and p.search_text ilike ${pattern})`);
  }

  const result = await sql<SearchMatch & { total: number }>`
    with matches as materialized (
      select m.*, ${NL} || lower(m.text) || ${NL} as framed from (${sql.join(parts, sql` union all `)}) m
    ),
    page as (
      select kind, ref, workspace_id, surface_id, surface_slug, idx, text, updated_at, ${score(needle)} as score, count(*) over () as total
      from matches
      order by score desc, updated_at desc, ref
      limit ${query.limit} offset ${query.offset}
    )
    select page.kind, page.ref, page.score, page.updated_at, page.total, page.text, page.surface_id, page.surface_slug,
      w.id as workspace_id, w.slug as workspace_slug, w.name as workspace_name, w.mode as workspace_mode,
      o.slug as org_slug, o.name as org_name,
      r.data as row_data, ds.heading, page.idx as section_index
    from page
    join workspaces w on w.id = page.workspace_id
    join orgs o on o.id = w.org_id
    left join table_rows r on page.kind = 'row' and r.id = page.ref
    left join doc_sections ds on page.kind = 'doc-section' and ds.surface_id = page.surface_id and ds.idx = page.idx
    order by page.score desc, page.updated_at desc, page.ref
  `.execute(db);

  const rows = result.rows;
  let count = rows[0]?.total ?? 0;
  if (rows.length === 0 && query.offset > 0) count = await countMatches(db, query);
  return { matches: rows.map(({ total: _total, ...match }) => ({ ...match, score: Number(match.score) })), count: Number(count) };
}

/** The count alone, for a page past the end (the windowed count has no row to ride on). */
async function countMatches(db: Executor, query: SearchQuery): Promise<number> {
  const { count } = await searchProjectionsExact(db, { ...query, offset: 0, limit: 1 });
  return count;
}
