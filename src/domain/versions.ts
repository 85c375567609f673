import type * as Y from 'yjs';
import { docFromJSONLenient } from '../model/doc/json';
import { docToMarkdown } from '../model/doc/markdown';
import { errors } from '../errors';
import { emitEvents } from '../events/emit';
import { sanitizeHtml } from '../files/sanitize';
import type { Actor, Principal } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { newId } from '../lib/ids';
import { capsFor } from '../limits/plans';
import type { PlanName, Surface, Workspace } from '../persistence/schema';
import { findRefusedRowIds } from '../persistence/events';
import { findProjectedRowIds } from '../persistence/table-rows';
import {
  findVersion,
  findVersionAt,
  latestVersionBefore,
  listVersions,
  markStartPoints,
  prepareVersions,
  versionContent,
  writeVersions,
  type NewVersion,
  type RestoredFrom,
  type StoredVersion,
} from '../persistence/versions';
import { findPrincipals, findSurface } from '../persistence/workspaces';
import type { Services } from './services';
import { countChanges, diffContents, type ContentDiff, type SequenceChange } from '../sync/content-diff';
import { surfaceDocumentName } from '../model/document-names';
import { callerOrigin, SYSTEM_PRINCIPAL } from '../sync/origins';
import { readSurfaceContent, restoreSurfaceContent, rowsAddedByRestoring, type HistorySurface, type SurfaceContent } from '../sync/surface-content';
import { indexVersions, type HistoryPass } from '../sync/version-index';
import { tableError, transactWithinRowCap } from './tables';
import { transactWithEvents, workspaceEvent } from './transact';
import { versionTag } from './version-tags';
import type { Version } from '../model/schemas/versions';

/**
 * Version history of doc, html and table surfaces (docs/VERSIONS.md): the
 * list, naming, showing, comparing and restoring. Versions are made from
 * the update log by src/sync/version-index.ts; every call here brings them
 * up to date first, so the list always ends with the current state.
 */

export type VersionedSurface = { surface: Surface; document: string; history: HistorySurface };

/** A version as every version route answers it (src/model/schemas/versions.ts). */
export type VersionRecord = Version;

/** The doc, html or table surface a version route names; files surfaces keep versions per file, not here. */
export async function findVersionedSurface(services: Services, workspace: Workspace, slugOrId: string): Promise<VersionedSurface> {
  const surface = await findSurface(services.db, workspace.id, slugOrId);
  const document = surface ? surfaceDocumentName(workspace.id, surface) : null;
  if (!surface || !document || surface.kind === 'files') throw errors.notFound('Surface with version history');
  return { surface, document, history: { id: surface.id, kind: surface.kind } };
}

async function present(services: Services, versions: StoredVersion[]): Promise<VersionRecord[]> {
  const ids = versions.flatMap((v) => [v.author?.id, ...v.editors.map((e) => e.id)]).filter((id): id is string => typeof id === 'string');
  const principals = await findPrincipals(services.db, ids);
  const principal = (ref: { principalType: Principal['principalType'] | null; id: string | null } | null): Principal =>
    (ref?.id ? principals.get(ref.id) : undefined) ??
    (ref?.id && ref.principalType ? { principalType: ref.principalType, id: ref.id, name: 'Former member', avatarUrl: null } : SYSTEM_PRINCIPAL);
  return versions.map((v) => ({
    id: v.id,
    surfaceId: v.surfaceId,
    kind: v.kind,
    name: v.name,
    createdAt: v.createdAt.toISOString(),
    createdBy: principal(v.author),
    editors: v.editors.map((e) => ({ principal: principal(e), edits: e.edits })),
    changes: v.changes ?? { unit: 'blocks', added: 0, removed: 0, changed: 0 },
    restoredFrom: v.restoredFrom,
    etag: versionTag(v.document, v.seq),
  }));
}

type ListPosition = { seq: number; kind: 'auto' | 'named'; id: string };

function encodeListCursor(version: StoredVersion): string {
  return Buffer.from(JSON.stringify([version.seq, version.kind, version.id])).toString('base64url');
}

function decodeListCursor(raw: string): ListPosition {
  try {
    const [seq, kind, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    if (typeof seq === 'number' && Number.isSafeInteger(seq) && (kind === 'auto' || kind === 'named') && typeof id === 'string') return { seq, kind, id };
  } catch {
    // fall through
  }
  throw errors.badRequest('Invalid cursor: pass the nextCursor of the previous page.', [{ path: ['before'], code: 'invalid_cursor', message: 'not a cursor of this list' }]);
}

export async function listSurfaceVersions(
  services: Services,
  plan: PlanName,
  versioned: VersionedSurface,
  query: { limit: number; before?: string },
): Promise<{ versions: VersionRecord[]; nextCursor: string | null; history: { since: string | null; retentionDays: number | null } }> {
  const before = query.before ? decodeListCursor(query.before) : undefined;
  const pass = await upToDate(services, versioned);
  const rows = await listVersions(services.db, versioned.surface.workspaceId, versioned.surface.id, { limit: query.limit + 1, before });
  const page = rows.slice(0, query.limit);
  return {
    versions: await present(services, page),
    nextCursor: rows.length > query.limit ? encodeListCursor(page.at(-1)!) : null,
    history: {
      since: pass.cursor.historyFromSeq > 0 ? (pass.cursor.historyFrom?.toISOString() ?? null) : null,
      retentionDays: capsFor(plan).versionRetentionDays,
    },
  };
}

async function upToDate(services: Services, versioned: VersionedSurface, atHead = false): Promise<HistoryPass> {
  const pass = await indexVersions(services.db, versioned.document, atHead ? versioned.history : undefined);
  if (!pass) throw errors.notFound('Surface with version history');
  return pass;
}

/** Names the surface as it is now (the newest logged state); named versions are kept whatever the plan's retention. */
export async function nameVersion(services: Services, actor: Actor, resolved: ResolvedWorkspace, versioned: VersionedSurface, name: string): Promise<VersionRecord> {
  const pass = await upToDate(services, versioned, true);
  const version = await newNamedVersion(services, versioned, pass, name, actor.principal);
  const [prepared] = await prepareVersions([version]);
  await transactWithEvents(services, async (tx, events) => {
    await writeVersions(tx, [prepared!]);
    events.push(
      workspaceEvent('version.created', { workspace: resolved.workspace, orgSlug: resolved.orgSlug, surface: versioned.surface }, actor, {
        versionId: version.id,
        surfaceId: versioned.surface.id,
        kind: 'named',
        name,
      }),
    );
  });
  return (await present(services, [{ ...version, contentBytes: prepared!.encoded.size, restoredFrom: null }]))[0]!;
}

async function newNamedVersion(services: Services, versioned: VersionedSurface, pass: HistoryPass, name: string, by: Principal): Promise<NewVersion> {
  const previous = await latestVersionBefore(services.db, versioned.surface.workspaceId, versioned.surface.id, pass.head + 1);
  const reference = previous ? await versionContent<SurfaceContent>(services.db, previous.id) : null;
  return {
    id: newId('ver'),
    workspaceId: versioned.surface.workspaceId,
    surfaceId: versioned.surface.id,
    document: versioned.document,
    kind: 'named',
    name,
    seq: pass.head,
    startPoint: false,
    createdAt: services.clock.now(),
    author: { principalType: by.principalType, id: by.id },
    editors: [],
    changes: countChanges(diffContents(reference, pass.atHead!)),
    content: pass.atHead!,
  };
}

async function storedVersion(services: Services, versioned: VersionedSurface, id: string): Promise<StoredVersion> {
  const version = await findVersion(services.db, versioned.surface.workspaceId, versioned.surface.id, id);
  if (!version) throw errors.notFound('Version');
  return version;
}

/**
 * A sheet's content without the rows the row cap refused: a sync client's
 * refused rows are in the update log (so in versions taken from it) until
 * the server's removal, but never in the table (docs/LIMITS.md "Rows over
 * sync"). A refused id the table holds now (made again later) stays.
 */
async function withoutRefusedRows(services: Services, workspaceId: string, content: SurfaceContent): Promise<SurfaceContent> {
  if (content.kind !== 'sheet' || content.rows.length === 0) return content;
  const refused = await findRefusedRowIds(services.db, workspaceId);
  const candidates = content.rows.filter((row) => refused.has(row.id)).map((row) => row.id);
  if (candidates.length === 0) return content;
  const kept = new Set(await findProjectedRowIds(services.db, workspaceId, candidates));
  const hidden = new Set(candidates.filter((id) => !kept.has(id)));
  return { ...content, rows: content.rows.filter((row) => !hidden.has(row.id)) };
}

/** A stored version's content, as REST and MCP may show it. */
async function shownContent(services: Services, versioned: VersionedSurface, versionId: string): Promise<SurfaceContent> {
  return withoutRefusedRows(services, versioned.surface.workspaceId, await versionContent<SurfaceContent>(services.db, versionId));
}

/** A version and the surface's content as it was then. */
export async function showVersion(services: Services, versioned: VersionedSurface, id: string): Promise<{ version: VersionRecord; content: SurfaceContent }> {
  const version = await storedVersion(services, versioned, id);
  const content = await shownContent(services, versioned, version.id);
  const shown = content.kind === 'html' ? { ...content, html: sanitizeHtml(content.html) } : content;
  return { version: (await present(services, [version]))[0]!, content: shown };
}

export type PresentedDiff =
  | { kind: 'doc'; blocks: Array<PresentedChange<{ markdown: string; node: unknown }>> }
  | { kind: 'html'; lines: Array<SequenceChange<string>> }
  | Extract<ContentDiff, { kind: 'sheet' }>;

type PresentedChange<T> = { op: 'added' | 'removed' | 'changed'; from?: number; to?: number; before?: T; after?: T };

/** What changed from version `id` to version `to` (or to the current state when `to` is `current`). */
export async function diffVersions(
  services: Services,
  versioned: VersionedSurface,
  id: string,
  to: string,
): Promise<{ from: VersionRecord; to: VersionRecord | { current: true; etag: string }; changes: VersionRecord['changes']; diff: PresentedDiff }> {
  const from = await storedVersion(services, versioned, id);
  const fromContent = await shownContent(services, versioned, from.id);
  let target: VersionRecord | { current: true; etag: string };
  let toContent: SurfaceContent;
  if (to === 'current') {
    const pass = await upToDate(services, versioned, true);
    target = { current: true, etag: versionTag(versioned.document, pass.head) };
    toContent = await withoutRefusedRows(services, versioned.surface.workspaceId, pass.atHead!);
  } else {
    const other = await storedVersion(services, versioned, to);
    target = (await present(services, [other]))[0]!;
    toContent = await shownContent(services, versioned, other.id);
  }
  const diff = diffContents(fromContent, toContent);
  return { from: (await present(services, [from]))[0]!, to: target, changes: countChanges(diff), diff: presentDiff(diff) };
}

function presentDiff(diff: ContentDiff): PresentedDiff {
  if (diff.kind !== 'doc') return diff;
  const block = (node: unknown) => ({ markdown: docToMarkdown(docFromJSONLenient({ type: 'doc', content: [node] })), node });
  return {
    kind: 'doc',
    blocks: diff.blocks.map((change) => ({
      op: change.op,
      ...('from' in change ? { from: change.from } : {}),
      ...('to' in change ? { to: change.to } : {}),
      ...('before' in change ? { before: block(change.before) } : {}),
      ...('after' in change ? { after: block(change.after) } : {}),
    })),
  };
}

/**
 * Makes the surface look as it did at version `id`, as one new change by
 * the caller on top of the current state (connected clients receive it like
 * any edit; events as for any write). The state just before is kept as a
 * version (`undo`): restoring that one undoes this.
 */
export async function restoreVersion(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  versioned: VersionedSurface,
  id: string,
): Promise<{ restored: VersionRecord; undo: VersionRecord }> {
  const version = await storedVersion(services, versioned, id);
  const stored = await shownContent(services, versioned, version.id);
  // What a sync client wrote into an html page may never have met the sanitiser; a restore writes through it like PUT does.
  const content = stored.kind === 'html' ? { ...stored, html: sanitizeHtml(stored.html) } : stored;
  const undo = await keepCurrentState(services, versioned);
  const origin = callerOrigin(actor);
  // What the surface holds right after the restore: the content of the version that records it.
  const restore = (doc: Y.Doc) => {
    restoreSurfaceContent(doc, versioned.history, content, origin);
    return readSurfaceContent(doc, versioned.history);
  };
  // A sheet's restore may add rows: held to the row cap as a created row is.
  const { result: after, receipt } =
    versioned.history.kind === 'table'
      ? await transactWithinRowCap(services, actor, resolved, (doc) => rowsAddedByRestoring(doc, versioned.history, content), restore)
      : await services.sync.transactWithReceipt(versioned.document, origin, restore).catch(tableError);
  if (receipt.seq !== undefined) await recordRestorePoint(services, versioned, actor.principal, { seq: receipt.seq, content: after, before: undo, restored: version });
  const [restored, kept] = await present(services, [version, undo]);
  await emitEvents(services, [
    workspaceEvent('version.restored', { workspace: resolved.workspace, orgSlug: resolved.orgSlug, surface: versioned.surface }, actor, {
      versionId: version.id,
      surfaceId: versioned.surface.id,
      name: version.name,
      versionCreatedAt: version.createdAt.toISOString(),
      undoVersionId: undo.id,
    }),
  ]);
  return { restored: restored!, undo: kept! };
}

/**
 * The version at the restore's own log position, marked as a restore of
 * `restored` (docs/VERSIONS.md "Restore"): the list shows it as one, not as
 * an edit. A start point, so the restorer's next edits make a version of
 * their own. A pass that already reached that position (its session's end)
 * keeps its id and gains the mark; one that reaches it later keeps the mark.
 */
async function recordRestorePoint(
  services: Services,
  versioned: VersionedSurface,
  by: Principal,
  point: { seq: number; content: SurfaceContent; before: StoredVersion; restored: StoredVersion },
): Promise<void> {
  const previous = await versionContent<SurfaceContent>(services.db, point.before.id);
  const restoredFrom = { versionId: point.restored.id, name: point.restored.name, createdAt: point.restored.createdAt.toISOString() };
  const [prepared] = await prepareVersions([pinnedAutoVersion(services, versioned, { seq: point.seq, previous, content: point.content, by, restoredFrom })]);
  await writeVersions(services.db, [prepared!]);
}

/** An automatic version at `seq`, a start point (no growing session moves it), its changes counted from `previous`. */
function pinnedAutoVersion(
  services: Services,
  versioned: VersionedSurface,
  point: { seq: number; previous: SurfaceContent | null; content: SurfaceContent; by: Principal | null; restoredFrom?: RestoredFrom },
): NewVersion {
  const { by } = point;
  return {
    id: newId('ver'),
    workspaceId: versioned.surface.workspaceId,
    surfaceId: versioned.surface.id,
    document: versioned.document,
    kind: 'auto',
    name: null,
    seq: point.seq,
    startPoint: true,
    createdAt: services.clock.now(),
    author: by ? { principalType: by.principalType, id: by.id } : null,
    editors: by ? [{ principalType: by.principalType, id: by.id, edits: 1 }] : [],
    changes: countChanges(diffContents(point.previous, point.content)),
    content: point.content,
    ...(point.restoredFrom ? { restoredFrom: point.restoredFrom } : {}),
  };
}

/**
 * A version holding the surface as it is now, pinned so a growing editing
 * session never moves it: the surface's newest version when it still
 * matches the current content, else a new automatic one at the newest log
 * position.
 */
async function keepCurrentState(services: Services, versioned: VersionedSurface): Promise<StoredVersion> {
  const pass = await upToDate(services, versioned, true);
  const [latest] = await listVersions(services.db, versioned.surface.workspaceId, versioned.surface.id, { limit: 1 });
  if (latest && JSON.stringify(await versionContent(services.db, latest.id)) === JSON.stringify(pass.atHead)) {
    if (latest.kind === 'auto') await markStartPoints(services.db, versioned.document, [latest.seq]);
    return latest;
  }
  const previous = latest ? await versionContent<SurfaceContent>(services.db, latest.id) : null;
  const version = pinnedAutoVersion(services, versioned, { seq: pass.head, previous, content: pass.atHead!, by: null });
  const prepared = await prepareVersions([version]);
  await writeVersions(services.db, prepared);
  // An automatic version already at that position keeps its id.
  return (await findVersionAt(services.db, versioned.surface.workspaceId, versioned.surface.id, pass.head))!;
}
