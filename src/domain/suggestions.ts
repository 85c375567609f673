import type { Node as PMNode } from 'prosemirror-model';
import type * as Y from 'yjs';
import { ApiError, errors } from '../errors';
import { publishEvents, recordEvents } from '../events/emit';
import { newId } from '../lib/ids';
import { readDocBody } from '../model/doc/body';
import { markdownToDoc } from '../model/doc/markdown';
import {
  decideDocSuggestion,
  docSuggestions,
  suggestDocAppend,
  suggestDocReplace,
  docSuggestionSummary,
  type DocSuggestionView,
  type SuggestionStamp,
} from '../model/doc/suggestions';
import type { EventDraft } from '../model/event-record';
import { toIso } from '../model/schemas/common';
import type { Suggestion } from '../model/schemas/suggestions';
import { insertInboxMessage } from '../persistence/inbox';
import type { Surface, Workspace } from '../persistence/schema';
import { findSuggestion, listSuggestions, markSuggestionDecided, type SuggestionRecord } from '../persistence/suggestions';
import { findPrincipals } from '../persistence/workspaces';
import type { Actor, Principal } from '../policy/actor';
import type { WorkspaceAction } from '../policy/index';
import { callerOrigin, type ServerChangeContext, type ServerOrigin } from '../sync/origins';
import { documentOf, parseDocInput, pickDocSurface, type DocInput, type DocSelector } from './docs';
import { cachedLiveSurfaces, selectedSurface } from './live-surfaces';
import type { ResolvedWorkspace, WorkspaceAddress, WorkspaceResolver } from './resolved-workspace';
import { decideRowSuggestion, rowSuggestionViews } from './row-suggestions';
import type { Services } from './services';

/**
 * Suggestions (docs/SUGGESTIONS.md): proposed changes to a doc body or a
 * table's rows that an editor accepts or rejects. The proposal itself lives
 * in the surface's Y document (marks in a doc body, src/model/doc/suggestions.ts;
 * entries beside the rows, src/model/table/suggestions.ts), so it syncs live
 * and offline; the observer records each one in the suggestions projection
 * when it first appears, whoever made it. Deciding is a change attributed
 * to the decider, then the projection's status, in that order: a decision
 * applied twice is a no-op in the document, and only one caller wins the
 * status (the other gets 409).
 */

export type SuggestionListQuery = DocSelector & { status: 'open' | 'accepted' | 'rejected' | 'all' };

export type LoadedSuggestion = { record: SuggestionRecord; resolved: ResolvedWorkspace };

const LIST_LIMIT = 500;

function stampFor(actor: Actor, at: Date): SuggestionStamp {
  const { principalType, id, name } = actor.principal;
  return { id: newId('sug'), author: { principalType, id, name }, at: at.toISOString() };
}

/** The suggestion a write just made, as its creator sees it (the observer recorded it in the write's commit). */
async function createdSuggestion(services: Services, resolved: ResolvedWorkspace, id: string): Promise<Suggestion> {
  const record = await findSuggestion(services.db, id);
  if (!record) throw new Error(`suggestion ${id} was not recorded with its change`);
  const [presented] = await presentSuggestions(services, resolved.workspace, [record]);
  return presented!;
}

type DocProposal = (doc: Y.Doc, stamp: SuggestionStamp, origin: ServerOrigin) => boolean | number;

/** One suggestion written into a doc surface's body by `propose` (falsy: it would change nothing, 400). */
async function proposeInDoc(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  via: ServerChangeContext['via'],
  propose: DocProposal,
): Promise<Suggestion> {
  const surface = await pickDocSurface(services, resolved.workspace, selector);
  const stamp = stampFor(actor, services.clock.now());
  const origin = callerOrigin(actor, via);
  const made = await services.sync.transact(documentOf(surface), origin, (doc) => propose(doc, stamp, origin));
  if (!made) throw noChange();
  return createdSuggestion(services, resolved, stamp.id);
}

/** PUT /doc?mode=suggest: the difference between the doc as read (open suggestions rejected) and `input`, proposed. */
export async function suggestDocReplacement(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  input: DocInput,
  via: ServerChangeContext['via'] = 'rest',
): Promise<Suggestion> {
  const node = parseDocInput(input);
  return proposeInDoc(services, actor, resolved, selector, via, (doc, stamp, origin) => suggestDocReplace(doc, node, stamp, origin));
}

/** POST /doc/sections?mode=suggest: the blocks of `markdown`, proposed at the end of the doc. */
export async function suggestDocSection(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  markdown: string,
  via: ServerChangeContext['via'] = 'rest',
): Promise<Suggestion> {
  const parsed = markdownToDoc(markdown);
  const blocks: PMNode[] = [...parsed.content.content].filter((block) => block.content.size > 0 || block.type.name !== 'paragraph');
  if (blocks.length === 0) throw noChange();
  return proposeInDoc(services, actor, resolved, selector, via, (doc, stamp, origin) => suggestDocAppend(doc, blocks, stamp, origin));
}

function noChange(): ApiError {
  return errors.badRequest('Nothing to suggest: the doc already reads like this.', [{ path: [], code: 'no_change', message: 'the suggestion would change nothing' }]);
}

/** A suggestion by id, through its workspace (404 when the caller cannot see that workspace, as for comments). */
export async function loadSuggestion(
  services: Services,
  resolveWorkspace: WorkspaceResolver,
  actor: Actor | null,
  id: string,
  action: WorkspaceAction,
): Promise<LoadedSuggestion> {
  const record = await findSuggestion(services.db, id);
  if (!record) throw errors.notFound('Suggestion');
  const address: WorkspaceAddress = { slug: record.workspaceId };
  const resolved = await resolveWorkspace(actor, address, action).catch((error: unknown) => {
    throw error instanceof ApiError && error.statusCode === 404 ? errors.notFound('Suggestion') : error;
  });
  return { record, resolved };
}

/** The surface a listing names, or undefined for the whole workspace; 404 for an unknown one. */
async function surfaceFor(services: Services, workspace: Workspace, selector: DocSelector): Promise<Surface | undefined> {
  if (selector.surface === undefined && selector.surfaceId === undefined) return undefined;
  const found = selectedSurface(await cachedLiveSurfaces(services, workspace.id), selector);
  if (!found) throw errors.notFound('Surface');
  return found;
}

/** The suggestion records a listing names (by surface and status), oldest first. */
async function listedRecords(services: Services, workspace: Workspace, selector: DocSelector, status: SuggestionListQuery['status']): Promise<SuggestionRecord[]> {
  const surface = await surfaceFor(services, workspace, selector);
  return listSuggestions(services.db, { workspaceId: workspace.id, surfaceId: surface?.id, status, limit: LIST_LIMIT });
}

/** A workspace's suggestions (one surface's with `surface`/`surfaceId`), oldest first; open by default. */
export async function listWorkspaceSuggestions(services: Services, resolved: ResolvedWorkspace, query: SuggestionListQuery): Promise<Suggestion[]> {
  const records = await listedRecords(services, resolved.workspace, query, query.status);
  const presented = await presentSuggestions(services, resolved.workspace, records);
  // An open doc suggestion whose text someone removed since is no longer anything to decide.
  return presented.filter((s) => !(s.status === 'open' && s.target === 'doc' && s.inserted === undefined));
}

/**
 * The public shape of suggestions. Open ones are read from their document
 * (a doc suggestion's text and context, a row suggestion's change and
 * conflicts); decided ones keep the summary frozen at the decision.
 */
export async function presentSuggestions(services: Services, workspace: Workspace, records: readonly SuggestionRecord[]): Promise<Suggestion[]> {
  const principals = await findPrincipals(services.db, records.flatMap((r) => [r.authorId, ...(r.decidedById ? [r.decidedById] : [])]));
  const principalOf = (kind: 'user' | 'agent', id: string): Principal => principals.get(id) ?? { principalType: kind, id, name: 'Deleted', avatarUrl: null };
  const surfaces = new Map((await cachedLiveSurfaces(services, workspace.id)).map((s) => [s.id, s]));

  const docViews = new Map<string, DocSuggestionView>();
  const openDocSurfaces = new Set(records.filter((r) => r.status === 'open' && r.target === 'doc').map((r) => r.surfaceId));
  for (const surfaceId of openDocSurfaces) {
    const surface = surfaces.get(surfaceId);
    if (!surface) continue;
    const views = await services.sync.read(documentOf(surface), (doc) => docSuggestions(readDocBody(doc)));
    for (const view of views) docViews.set(view.id, view);
  }
  const rowChanges: Map<string, NonNullable<Suggestion['change']>> = records.some((r) => r.target === 'row') ? await rowSuggestionViews(services, workspace) : new Map();

  return records.map((record) => {
    const base: Suggestion = {
      id: record.id,
      surfaceId: record.surfaceId,
      target: record.target,
      ...(record.rowId ? { rowId: record.rowId } : {}),
      status: record.status,
      author: principalOf(record.authorType, record.authorId),
      createdAt: toIso(record.createdAt)!,
      ...(record.decidedById && record.decidedByType ? { decidedBy: principalOf(record.decidedByType, record.decidedById) } : {}),
      ...(record.decidedAt ? { decidedAt: toIso(record.decidedAt)! } : {}),
      summary: record.summary,
    };
    if (record.target === 'doc') {
      const view = record.status === 'open' ? docViews.get(record.id) : undefined;
      if (!view) return base;
      return { ...base, summary: docSuggestionSummary(view), inserted: view.inserted, removed: view.removed, context: { before: view.before, after: view.after } };
    }
    const change = rowChanges.get(record.id);
    return change ? { ...base, change } : base;
  });
}

/**
 * Accepts or rejects one open suggestion as `actor` (the route checked
 * `decide_suggestions`). 409 when it was decided already, or when a doc
 * suggestion's text is gone from the doc.
 */
export async function decideSuggestion(
  services: Services,
  actor: Actor,
  { record, resolved }: LoadedSuggestion,
  decision: 'accept' | 'reject',
  via: ServerChangeContext['via'] = 'rest',
): Promise<Suggestion> {
  if (record.status !== 'open') throw alreadyDecided(record.status);
  const origin = callerOrigin(actor, via);
  const [open] = await presentSuggestions(services, resolved.workspace, [record]);
  const summary = open!.summary;
  const surface = selectedSurface(await cachedLiveSurfaces(services, resolved.workspace.id), { surfaceId: record.surfaceId });
  if (record.target === 'doc') {
    if (!surface) throw errors.notFound('Doc surface');
    const found = await services.sync.transact(documentOf(surface), origin, (doc) => decideDocSuggestion(doc, record.id, decision, origin));
    if (!found) {
      const now = await findSuggestion(services.db, record.id);
      if (now && now.status !== 'open') throw alreadyDecided(now.status);
      throw errors.conflict('This suggestion is no longer in the doc: its text was removed since.');
    }
  } else {
    await decideRowSuggestion(services, actor, resolved, record.surfaceId, record.id, decision);
  }

  const status = decision === 'accept' ? 'accepted' : 'rejected';
  const at = services.clock.now();
  const workspace = { id: resolved.workspace.id, slug: resolved.workspace.slug, org: { slug: resolved.orgSlug } };
  const draft: EventDraft = {
    event: decision === 'accept' ? 'suggestion.accepted' : 'suggestion.rejected',
    orgId: resolved.workspace.orgId,
    workspace,
    ...(surface ? { surface: { id: surface.id, slug: surface.slug } } : {}),
    principal: actor.principal,
    subjectId: record.id,
    data: { suggestionId: record.id, surfaceId: record.surfaceId, target: record.target, ...(record.rowId ? { rowId: record.rowId } : {}), summary, author: open!.author },
  };
  const events = await services.db.transaction().execute(async (tx) => {
    if (!(await markSuggestionDecided(tx, record.id, { status, by: actor.principal, at, summary }))) return null;
    // An agent that suggested hears the outcome in its inbox (its wake-up path); people see it in the doc.
    if (record.authorType === 'agent' && record.authorId !== actor.principal.id) {
      await insertInboxMessage(tx, {
        id: newId('msg'),
        recipientId: record.authorId,
        orgId: resolved.workspace.orgId,
        workspaceId: resolved.workspace.id,
        kind: 'suggestion_decided',
        payload: JSON.stringify({ workspace, suggestion: { id: record.id, surfaceId: record.surfaceId, target: record.target, status, summary }, from: actor.principal }),
        createdAt: at,
      });
    }
    return recordEvents(services, tx, [draft]);
  });
  if (!events) {
    const now = await findSuggestion(services.db, record.id);
    throw alreadyDecided(now?.status ?? 'decided');
  }
  publishEvents(services, events);
  if (record.authorType === 'agent' && record.authorId !== actor.principal.id) services.inbox.notify(record.authorId);
  const decided = await findSuggestion(services.db, record.id);
  const [presented] = await presentSuggestions(services, resolved.workspace, [decided!]);
  return presented!;
}

/** Accepts or rejects every open suggestion of the workspace (of one surface with a selector), oldest first; returns those decided. */
export async function decideAllSuggestions(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  selector: DocSelector,
  decision: 'accept' | 'reject',
  via: ServerChangeContext['via'] = 'rest',
): Promise<Suggestion[]> {
  const decided: Suggestion[] = [];
  for (const record of await listedRecords(services, resolved.workspace, selector, 'open')) {
    try {
      decided.push(await decideSuggestion(services, actor, { record, resolved }, decision, via));
    } catch (error) {
      // Decided meanwhile by someone else, or no longer applicable: the others still go through.
      if (!(error instanceof ApiError && error.statusCode === 409)) throw error;
    }
  }
  return decided;
}

function alreadyDecided(status: string): ApiError {
  return errors.conflict(`This suggestion was already ${status}.`);
}
