import type * as Y from 'yjs';
import { parsePrincipalKey, type AttributionLookup, type PrincipalKey } from '../model/attribution';
import { docAuthorship, type AuthorshipOptions } from '../model/doc/attribution';
import { cellWriters } from '../model/table/attribution';
import { tablesDocumentName } from '../model/document-names';
import type { Principal } from '../model/schemas/common';
import { findAgentOwners, loadAttribution, type LoadedAttribution } from '../persistence/attribution';
import type { Db } from '../persistence/database';
import type { Workspace } from '../persistence/schema';
import { findPrincipals } from '../persistence/workspaces';
import { documentOf, pickDocSurface, type DocSelector } from './docs';
import type { Services } from './services';
import { assertRowOnSheet, type SurfaceSelector } from './tables';

/**
 * Who wrote what (docs/ATTRIBUTION.md): a doc's text as spans by principal
 * and a row's cells by last writer, both from the update log's own
 * attribution (src/persistence/attribution.ts), never a second record.
 */

/** A principal as attribution shows it: an agent carries the user who owns it. */
export type AttributedPrincipal = Principal & { owner?: Principal };

export type DocAttributionSpan = { text: string; principal: AttributedPrincipal | null };

/**
 * The ranges of the documents read lately, per database: a read goes on
 * from where the last one stopped in the log (an open authorship view reads
 * again after every burst of typing) and starts over after a fold.
 */
const loaded = new WeakMap<Db, Map<string, LoadedAttribution>>();
const LOADED_DOCUMENTS = 64;

async function attributionOf(services: Services, document: string): Promise<LoadedAttribution> {
  let cache = loaded.get(services.db);
  if (!cache) loaded.set(services.db, (cache = new Map()));
  const earlier = cache.get(document);
  cache.delete(document);
  const now = await loadAttribution(services.db, document, earlier);
  cache.set(document, now);
  // Least recently read first out.
  if (cache.size > LOADED_DOCUMENTS) cache.delete(cache.keys().next().value!);
  return now;
}

/**
 * Reads the document with the attribution loaded before it. Anything the
 * read sees is committed (DocumentSync.read), but may have committed after
 * the attribution was loaded: then it is loaded once more.
 */
async function readAttributed<T>(services: Services, document: string, read: (doc: Y.Doc, lookup: AttributionLookup) => { value: T; complete: boolean }): Promise<T> {
  let { ranges } = await attributionOf(services, document);
  let result = await services.sync.read(document, (doc) => read(doc, ranges.lookup));
  if (result.complete) return result.value;
  ({ ranges } = await attributionOf(services, document));
  result = await services.sync.read(document, (doc) => read(doc, ranges.lookup));
  return result.value;
}

/** The public shape of each principal key; the system, deleted principals and items no logged update names come out null. */
async function principalsOf(services: Services, keys: Iterable<PrincipalKey>): Promise<Map<string, AttributedPrincipal>> {
  const parsed = [...new Set([...keys].filter((key): key is string => key !== null))].map((key) => ({ key, ...parsePrincipalKey(key) }));
  const owners = await findAgentOwners(services.db, parsed.filter((p) => p.principalType === 'agent').map((p) => p.id));
  const found = await findPrincipals(services.db, [...parsed.map((p) => p.id), ...owners.values()]);
  const out = new Map<string, AttributedPrincipal>();
  for (const { key, principalType, id } of parsed) {
    const principal = found.get(id);
    if (!principal || principal.principalType !== principalType) continue;
    const owner = owners.get(id);
    const ownerPrincipal = owner ? found.get(owner) : undefined;
    out.set(key, ownerPrincipal ? { ...principal, owner: ownerPrincipal } : principal);
  }
  return out;
}

export async function readDocAttribution(
  services: Services,
  workspace: Workspace,
  selector: DocSelector,
  options: AuthorshipOptions = {},
): Promise<{ surfaceId: string; spans: DocAttributionSpan[] }> {
  const surface = await pickDocSurface(services, workspace, selector);
  const spans = await readAttributed(services, documentOf(surface), (doc, lookup) => {
    const value = docAuthorship(doc, lookup, options);
    return { value, complete: value.every((span) => span.known) };
  });
  const principals = await principalsOf(services, spans.map((span) => span.key));
  // Spans of two keys that both resolve to no one (the system, a deleted principal) read as one.
  const out: DocAttributionSpan[] = [];
  for (const span of spans) {
    const principal = (span.key !== null && principals.get(span.key)) || null;
    const last = out[out.length - 1];
    if (last && (last.principal?.id ?? null) === (principal?.id ?? null)) last.text += span.text;
    else out.push({ text: span.text, principal });
  }
  return { surfaceId: surface.id, spans: out };
}

/** Per column key of a row's stored cells, who last set it (keys whose writer is unknown are left out). */
export async function readRowAttribution(services: Services, workspace: Workspace, rowId: string, selector: SurfaceSelector = {}): Promise<Record<string, AttributedPrincipal>> {
  await assertRowOnSheet(services, workspace, rowId, selector);
  const writers = await readAttributed(services, tablesDocumentName(workspace.id), (doc, lookup) => {
    const value = cellWriters(doc, rowId, lookup) ?? {};
    return { value, complete: Object.values(value).every((writer) => writer.known) };
  });
  const principals = await principalsOf(services, Object.values(writers).map((writer) => writer.key));
  const out: Record<string, AttributedPrincipal> = {};
  for (const [column, writer] of Object.entries(writers)) {
    const principal = writer.key !== null ? principals.get(writer.key) : undefined;
    if (principal) out[column] = principal;
  }
  return out;
}
