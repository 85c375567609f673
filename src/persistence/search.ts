import { sql, type RawBuilder } from 'kysely';
import type { SearchKind } from '../model/schemas/search';
import type { Executor } from './database';
import { searchedInParts } from './doc-sections';

/**
 * Search over the projections: workspace names, row cell text and doc
 * sections (heading and text), through `table_rows.search_text` (migration
 * 0040) and the sections' searched parts (`doc_section_parts`, 0190). Matching is `ILIKE '%q%'`, served by the trigram indexes; the
 * caller has already decided which workspaces may be searched.
 */

export type { SearchKind };

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

/**
 * How many matches of each kind are read and scored at most. A broad query
 * (a common word matches half of every table) stops there instead of
 * reading, counting and scoring every match: its page is the best of these
 * candidates, and its count a lower bound (`estimated`). Queries with fewer
 * matches of every kind are exact, as before (docs/SEARCH.md, "Broad queries").
 */
export const SEARCH_CANDIDATES = 1_000;

/** The page of matches (best first, ties newest first) and how many there are: in all, or at least (`estimated`) past SEARCH_CANDIDATES of a kind. */
export async function searchProjections(
  db: Executor,
  query: SearchQuery,
  candidates = SEARCH_CANDIDATES,
): Promise<{ matches: SearchMatch[]; count: number; estimated: boolean }> {
  if (query.workspaceIds.length === 0 || query.kinds.size === 0) return { matches: [], count: 0, estimated: false };
  const pattern = `%${escapeLike(query.text)}%`;
  const needle = query.text.toLowerCase();
  // A join, not `= any(...)`: when the caller reaches most workspaces the planner hashes the list
  // against the trigram matches instead of intersecting with a scan of the workspace index.
  const allowed = sql`unnest(${query.workspaceIds}::text[]) as allowed(id)`;
  // One more than the candidates tells a kind that has more from one that has exactly that many.
  const take = candidates + 1;

  // Every part names its columns: the union takes the first part's names, and any part may be first.
  // Deleted surfaces keep their projection rows until cleaned up; they are not found.
  const parts: RawBuilder<unknown>[] = [];
  if (query.kinds.has('workspace')) {
    parts.push(sql`(
      select 'workspace' as kind, w.id as ref, w.id as workspace_id, null::text as surface_id, null::text as surface_slug, null::integer as idx, w.name as text, w.updated_at
      from workspaces w join ${allowed} on allowed.id = w.id
      where w.name ilike ${pattern}
      limit ${take})`);
  }
  if (query.kinds.has('row')) {
    parts.push(sql`(
      select 'row' as kind, r.id as ref, r.workspace_id, r.surface_id, s.slug as surface_slug, null::integer as idx, r.search_text as text, r.updated_at
      from table_rows r
      join ${allowed} on allowed.id = r.workspace_id
      join surfaces s on s.id = r.surface_id and s.workspace_id = r.workspace_id and s.deleted_at is null
      where r.search_text ilike ${pattern}
      limit ${take})`);
  }
  if (query.kinds.has('doc-section')) {
    // A section is found by its parts (doc_section_parts): a query no longer than a part's repeated start lies whole in one
    // part; a longer one's start does, and the section's whole text is then matched against all of it.
    const inParts = searchedInParts(query.text);
    const sectionText = sql`coalesce(ds.heading, '') || ${NL} || ds.text`;
    parts.push(sql`(
      select 'doc-section' as kind, ds.surface_id || ':' || ds.idx as ref, ds.workspace_id, ds.surface_id, s.slug as surface_slug, ds.idx, ${sectionText} as text, ds.updated_at
      from doc_sections ds
      join ${allowed} on allowed.id = ds.workspace_id
      join surfaces s on s.id = ds.surface_id and s.workspace_id = ds.workspace_id and s.deleted_at is null
      where exists (
        select 1 from doc_section_parts p
        where p.surface_id = ds.surface_id and p.idx = ds.idx and p.search_text ilike ${`%${escapeLike(inParts)}%`}
      )${inParts === query.text ? sql`` : sql` and ${sectionText} ilike ${pattern}`}
      limit ${take})`);
  }

  const result = await sql<SearchMatch & { total: number; truncated: boolean }>`
    with matches as materialized (
      select m.*, ${NL} || lower(m.text) || ${NL} as framed, row_number() over (partition by m.kind) as ordinal
      from (${sql.join(parts, sql` union all `)}) m
    ),
    kinds as (
      select coalesce(sum(least(n, ${candidates})), 0) as total, coalesce(bool_or(n > ${candidates}), false) as truncated
      from (select kind, count(*) as n from matches group by kind) per_kind
    ),
    page as (
      select kind, ref, workspace_id, surface_id, surface_slug, idx, text, updated_at, ${score(needle)} as score
      from matches
      where ordinal <= ${candidates}
      order by score desc, updated_at desc, ref
      limit ${query.limit} offset ${query.offset}
    )
    select kinds.total, kinds.truncated, page.kind, page.ref, page.score, page.updated_at, page.text, page.surface_id, page.surface_slug,
      w.id as workspace_id, w.slug as workspace_slug, w.name as workspace_name, w.mode as workspace_mode,
      o.slug as org_slug, o.name as org_name,
      r.data as row_data, ds.heading, page.idx as section_index
    from kinds
    left join page on true
    left join workspaces w on w.id = page.workspace_id
    left join orgs o on o.id = w.org_id
    left join table_rows r on page.kind = 'row' and r.workspace_id = page.workspace_id and r.id = page.ref
    left join doc_sections ds on page.kind = 'doc-section' and ds.surface_id = page.surface_id and ds.idx = page.idx
    order by page.score desc, page.updated_at desc, page.ref
  `.execute(db);

  // `kinds` has one row, so the count and the flag come back even on a page past the end.
  const first = result.rows[0];
  const matches = result.rows.filter((row) => row.kind !== null).map(({ total: _total, truncated: _truncated, ...match }) => ({ ...match, score: Number(match.score) }));
  return { matches, count: Number(first?.total ?? 0), estimated: first?.truncated === true };
}
