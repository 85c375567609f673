import type { Actor } from '../policy/actor';
import type { SearchHit, SearchKind, SearchResult } from '../model/schemas/search';
import { searchProjections, type SearchMatch } from '../persistence/search';
import type { Services } from './services';
import { reachableWorkspaces } from './workspaces';
import { isLowSurrogate } from '../lib/text';

/**
 * Search across the workspaces a caller can read (the same set the
 * workspace list shows, archived ones left out): workspace names, row cells
 * and doc sections, case-insensitive substring. Rows are found as soon as
 * their write is acknowledged (the projection commits with it); doc sections
 * as soon as the doc's projection is rebuilt (docs/SYNC-DOCUMENTS.md).
 */

export type { SearchKind };
export type SearchRequest = { q: string; kind: 'all' | SearchKind; limit: number; offset: number };

export type { SearchHit, SearchResult };

const ALL_KINDS: SearchKind[] = ['workspace', 'row', 'doc-section'];
const TITLE_LENGTH = 120;
const SNIPPET_LENGTH = 160;

export async function search(services: Services, actor: Actor, request: SearchRequest): Promise<SearchResult> {
  const started = performance.now();
  const text = request.q.trim();
  if (text === '') return { hits: [], count: 0, countEstimated: false, took: 0 };
  const workspaceIds = (await reachableWorkspaces(services, actor, { archived: false })).map((r) => r.workspace.id);
  const { matches, count, estimated } = await searchProjections(services.db, {
    workspaceIds,
    text,
    kinds: new Set(request.kind === 'all' ? ALL_KINDS : [request.kind]),
    limit: request.limit,
    offset: request.offset,
  });
  const hits = matches.map((match) => presentHit(services, match, text));
  return { hits, count, countEstimated: estimated, took: Math.round(performance.now() - started) };
}

function presentHit(services: Services, match: SearchMatch, query: string): SearchHit {
  const workspace = {
    id: match.workspaceId,
    slug: match.workspaceSlug,
    name: match.workspaceName,
    mode: match.workspaceMode,
    org: { slug: match.orgSlug, name: match.orgName },
  };
  const surface = match.surfaceId && match.surfaceSlug ? { id: match.surfaceId, slug: match.surfaceSlug } : null;
  const base = `/${encodeURIComponent(match.orgSlug)}/${encodeURIComponent(match.workspaceSlug)}`;
  const api = `/api/orgs/${encodeURIComponent(match.orgSlug)}/workspaces/${encodeURIComponent(match.workspaceSlug)}`;
  const common = { score: Math.min(1, Math.max(0, match.score)), workspace, surface, updatedAt: new Date(match.updatedAt).toISOString() };
  const surfacePath = surface ? `/${encodeURIComponent(surface.slug)}` : '';

  switch (match.kind) {
    case 'workspace':
      return { id: `workspace:${match.ref}`, kind: 'workspace', title: match.text, ...common, url: services.config.publicUrl + base, apiUrl: api };
    case 'row':
      return {
        id: `row:${match.ref}`,
        kind: 'row',
        title: clip(rowTitle(match.rowData ?? {}), TITLE_LENGTH),
        snippet: snippetOf(match.text, query),
        ...common,
        url: `${services.config.publicUrl}${base}${surfacePath}?row=${encodeURIComponent(match.ref)}`,
        apiUrl: `${api}/rows/${encodeURIComponent(match.ref)}`,
      };
    case 'doc-section': {
      const body = match.text.slice(match.text.indexOf('\n') + 1);
      const surfaceQuery = surface ? `?surface=${encodeURIComponent(surface.slug)}` : '';
      return {
        id: `doc-section:${match.ref}`,
        kind: 'doc-section',
        title: clip(match.heading || firstLine(body) || 'Untitled section', TITLE_LENGTH),
        snippet: snippetOf(body, query),
        ...common,
        url: `${services.config.publicUrl}${base}${surfacePath}#section-${match.sectionIndex ?? 0}`,
        apiUrl: `${api}/doc${surfaceQuery}`,
      };
    }
  }
}

/** A row reads as its `title` cell, else its first text cell. */
function rowTitle(data: Record<string, unknown>): string {
  if (typeof data.title === 'string' && data.title.trim() !== '') return data.title;
  const firstText = Object.keys(data)
    .sort()
    .map((key) => data[key])
    .find((value): value is string => typeof value === 'string' && value.trim() !== '');
  return firstText ?? 'Untitled row';
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '') ?? '';
}

/** The line holding the match, cut to about SNIPPET_LENGTH characters around it. */
function snippetOf(text: string, query: string): string {
  const lines = text.split('\n');
  const needle = query.toLowerCase();
  const line = lines.find((l) => l.toLowerCase().includes(needle)) ?? firstLine(text);
  if (line.length <= SNIPPET_LENGTH) return line;
  const at = Math.max(0, line.toLowerCase().indexOf(needle));
  let start = Math.max(0, Math.min(at - Math.floor((SNIPPET_LENGTH - needle.length) / 2), line.length - SNIPPET_LENGTH));
  let end = start + SNIPPET_LENGTH;
  // Never split a surrogate pair at either edge.
  if (isLowSurrogate(line.charCodeAt(start))) start -= 1;
  if (isLowSurrogate(line.charCodeAt(end))) end += 1;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}

function clip(text: string, length: number): string {
  const chars = [...text];
  return chars.length <= length ? text : `${chars.slice(0, length - 1).join('')}…`;
}
