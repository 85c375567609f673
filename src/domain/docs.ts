import type { Node as PMNode } from 'prosemirror-model';
import { mergeDocBodies, type BlockConflict } from '../model/doc/doc-merge';
import { docFromJSONLenient } from '../model/doc/json';
import { docFromJSON, docToMarkdown, DocValidationError, markdownToDoc } from '../model/doc/markdown';
import { docSchema } from '../model/doc/schema';
import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Surface, Workspace } from '../persistence/schema';
import { cachedLiveSurfaces, selectedSurface } from './live-surfaces';
import { ensureSurfaceOfKind } from './surfaces';
import type { Services } from './services';
import { appendBlocks, readDocBody, replaceDocBody } from '../model/doc/body';
import { surfaceDocumentName } from '../model/document-names';
import { callerOrigin, type ServerChangeContext, type ServerOrigin } from '../sync/origins';
import { surfaceContentAt } from '../sync/version-index';
import { baseOfWrite, preconditionFailed, readVersionTag, type WriteBase } from './version-tags';
import { withSuggestionsRejected } from '../model/doc/suggestions';
import { keepOpenSuggestions } from '../model/doc/keep-suggestions';

/**
 * Doc bodies over REST and MCP. The body lives in the doc surface's Y
 * document (src/model/doc/body.ts); every write is one Y transaction
 * attributed to the caller that changes only the blocks that differ, and it
 * is durable, with its `doc.updated` event, before the call returns.
 */

export type DocSelector = { surface?: string; surfaceId?: string };

export type DocBody = { surface: Surface; body: PMNode };

/** A doc body as a client sends it: ProseMirror JSON in `content`, or Markdown. `content` wins. */
export type DocInput = { content?: unknown; markdown?: string };

function docSurfaces(surfaces: Surface[]): Surface[] {
  return surfaces.filter((s) => s.kind === 'doc');
}

function pickFrom(surfaces: Surface[], selector: DocSelector): Surface | null {
  if (selector.surfaceId === undefined && selector.surface === undefined) return docSurfaces(surfaces)[0] ?? null;
  const found = selectedSurface(surfaces, selector);
  if (!found || found.kind !== 'doc') throw errors.notFound('Doc surface');
  return found;
}

/** The named doc surface, or the primary one (the first doc surface by position); 404 when there is none. */
export async function pickDocSurface(services: Services, workspace: Workspace, selector: DocSelector): Promise<Surface> {
  const surface = pickFrom(await cachedLiveSurfaces(services, workspace.id), selector);
  if (!surface) throw errors.notFound('Doc surface');
  return surface;
}

/** A workspace without a doc surface gets one (`doc`) on its first doc write, recorded as `surface.created`. */
export async function docSurfaceForWrite(services: Services, actor: Actor, resolved: ResolvedWorkspace, selector: DocSelector): Promise<Surface> {
  const existing = pickFrom(await cachedLiveSurfaces(services, resolved.workspace.id), selector);
  if (existing) return existing;
  return ensureSurfaceOfKind(services, actor, resolved, 'doc');
}

export function documentOf(surface: Surface): string {
  return surfaceDocumentName(surface.workspaceId, surface)!;
}

/** The body and its version token (`ETag`), taken before the read so the body holds at least that version. */
export async function readDoc(services: Services, workspace: Workspace, selector: DocSelector): Promise<DocBody & { etag: string }> {
  const surface = await pickDocSurface(services, workspace, selector);
  const etag = await readVersionTag(services, documentOf(surface));
  const body = await services.sync.read(documentOf(surface), (doc) => readDocBody(doc));
  return { surface, body, etag };
}

/** Parses a client's body; invalid ProseMirror JSON is a 400 whose detail points at the offending node. */
export function parseDocInput(input: DocInput): PMNode {
  if (input.content !== undefined) {
    try {
      return docFromJSON(input.content);
    } catch (error) {
      if (!(error instanceof DocValidationError)) throw error;
      const path = ['content', ...error.path.map(String)];
      throw errors.badRequest(`Invalid ProseMirror content at /${path.join('/')}: ${error.detail}`, [
        { path, code: 'invalid_content', message: error.detail },
      ]);
    }
  }
  if (input.markdown !== undefined) return markdownToDoc(input.markdown);
  throw errors.badRequest('Send the body as `content` (ProseMirror JSON) or `markdown`.', [
    { path: ['content'], code: 'invalid_type', message: 'content or markdown is required' },
  ]);
}

/** A block conflict of a write with a base, as Markdown: the base's blocks, yours (not applied) and theirs (kept). */
export type DocConflict = { at: number; base: string; yours: string; theirs: string };

/**
 * Replaces the body: blocks equal to one already there are left alone, a
 * changed block is edited in place, so a sync client typing in another
 * block keeps its edit and its cursor. Returns the body as it is right after.
 *
 * With a base (`If-Match` or `baseVersion`, a token a read returned), the
 * body is merged as a diff against that base: only the blocks the caller
 * changed since are applied, so what others wrote since stays; where both
 * changed the same block, theirs is kept and the conflict reported. The
 * answer is then the current body with its new token.
 */
export async function replaceDoc(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  input: DocInput & { base?: WriteBase },
  via: ServerChangeContext['via'] = 'rest',
): Promise<DocBody & { etag?: string; conflicts?: DocConflict[] }> {
  const node = parseDocInput(input);
  const surface = await docSurfaceForWrite(services, actor, resolved, selector);
  const document = documentOf(surface);
  const baseSeq = input.base ? await baseOfWrite(services, document, input.base) : null;
  const base = baseSeq === null ? null : await baseBody(services, document, surface, baseSeq);
  const origin = callerOrigin(actor, via);
  let conflicts: BlockConflict[] = [];
  const body = await services.sync.transact(document, origin, (doc) => {
    // The caller wrote against the doc as read, with open suggestions rejected; those it left alone stay open.
    const current = readDocBody(doc);
    let target = node;
    if (base) ({ doc: target, conflicts } = mergeDocBodies(withSuggestionsRejected(base), node, withSuggestionsRejected(current)));
    replaceDocBody(doc, keepOpenSuggestions(current, target), origin);
    return withSuggestionsRejected(readDocBody(doc));
  });
  if (!base) return { surface, body };
  const current = await readDoc(services, resolved.workspace, { surfaceId: surface.id });
  return { surface, body: withSuggestionsRejected(current.body), etag: current.etag, conflicts: conflicts.map(presentConflict) };
}

async function baseBody(services: Services, document: string, surface: Surface, seq: number): Promise<PMNode> {
  const content = await surfaceContentAt(services.db, document, { id: surface.id, kind: 'doc' }, seq);
  if (!content || content.kind !== 'doc') {
    throw preconditionFailed('base_unavailable', 'The base version is no longer kept (bases stay usable for an hour after the read); read the doc again and redo the change on it.');
  }
  return docFromJSONLenient(content.content);
}

function presentConflict(conflict: BlockConflict): DocConflict {
  const markdown = (blocks: PMNode[]) => (blocks.length === 0 ? '' : docToMarkdown(docSchema.topNodeType.create(null, blocks)));
  return { at: conflict.at, base: markdown(conflict.base), yours: markdown(conflict.yours), theirs: markdown(conflict.theirs) };
}

/** Appends the blocks of `markdown` at the end of the body; Markdown with no blocks appends nothing. */
export async function appendDoc(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  markdown: string,
  via: ServerChangeContext['via'] = 'rest',
): Promise<{ surface: Surface; appendedBlocks: number }> {
  const blocks = blocksOf(markdownToDoc(markdown));
  const surface = await docSurfaceForWrite(services, actor, resolved, selector);
  if (blocks.length === 0) return { surface, appendedBlocks: 0 };
  const origin = callerOrigin(actor, via);
  const appendedBlocks = await services.sync.transact(documentOf(surface), origin, (doc) => appendBlocks(doc, blocks, origin));
  return { surface, appendedBlocks };
}

/** The blocks of a parsed doc, without the lone empty paragraph that stands for "no content". */
function blocksOf(doc: PMNode): PMNode[] {
  if (isEmptyBody(doc)) return [];
  return [...doc.content.content];
}

/** A body with nothing in it: one empty paragraph (what an empty fragment reads as). */
export function isEmptyBody(doc: PMNode): boolean {
  return doc.childCount === 1 && doc.firstChild!.type.name === 'paragraph' && doc.firstChild!.content.size === 0;
}

/** Whether the doc surface's body holds anything (guards deleting the last doc surface). */
export async function docHoldsData(services: Services, surface: Surface): Promise<boolean> {
  return services.sync.read(documentOf(surface), (doc) => !isEmptyBody(readDocBody(doc)));
}

/** Seeds a new workspace's doc body from `initialMarkdown`; runs outside any database transaction. */
export async function seedDocBody(services: Services, surface: { id: string; workspaceId: string }, markdown: string, origin: ServerOrigin) {
  const node = markdownToDoc(markdown);
  if (isEmptyBody(node)) return;
  await services.sync.transact(surfaceDocumentName(surface.workspaceId, { id: surface.id, kind: 'doc' })!, origin, (doc) => replaceDocBody(doc, node, origin));
}
