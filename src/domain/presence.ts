import * as Y from 'yjs';
import { errors } from '../errors';
import { surfaceDocumentName } from '../model/document-names';
import type { Presence, PresenceCursor } from '../model/schemas/presence';
import type { Surface, Workspace } from '../persistence/schema';
import { findPrincipals } from '../persistence/workspaces';
import { bodyPositionsOf } from '../sync/doc-anchors';
import type { PresentPrincipal, RawCursor } from '../sync/presence';
import { cachedLiveSurfaces, selectedSurface } from './live-surfaces';
import type { Services } from './services';

/**
 * Who has a surface open right now (docs/SYNC.md, "Presence"), so an agent
 * can tell whether a person is looking before it edits. The sync engine's
 * presence source answers for every instance; this names the surface's
 * document, adds each agent's owner and describes where each one is.
 */

export type PresenceSelector = { surface?: string; surfaceId?: string };

/** The named surface, or the workspace's primary one (its first surface with a document); 404 when there is none. */
async function pickSurface(services: Services, workspace: Workspace, selector: PresenceSelector): Promise<Surface> {
  const surfaces = await cachedLiveSurfaces(services, workspace.id);
  const named = selector.surface !== undefined || selector.surfaceId !== undefined;
  const found = named ? selectedSurface(surfaces, selector) : surfaces.find((s) => surfaceDocumentName(workspace.id, s) !== null);
  if (!found) throw errors.notFound('Surface');
  return found;
}

export async function listPresence(services: Services, workspace: Workspace, selector: PresenceSelector): Promise<{ present: Presence[] }> {
  const surface = await pickSurface(services, workspace, selector);
  const documentName = surfaceDocumentName(workspace.id, surface);
  // A files surface has no Y document: nobody has it open over sync.
  if (!documentName) return { present: [] };
  const present = await services.presence.present(documentName);
  const owners = await findPrincipals(services.db, present.flatMap((p) => (p.ownerUserId ? [p.ownerUserId] : [])));
  const cursors = await describeCursors(services, documentName, surface, present);
  return {
    present: present.map((entry, i) => {
      const owner = entry.ownerUserId ? owners.get(entry.ownerUserId) : undefined;
      const cursor = cursors[i];
      return {
        principal: entry.principal,
        since: new Date(entry.since).toISOString(),
        connections: entry.connections,
        ...(owner ? { owner } : {}),
        ...(cursor ? { cursor } : {}),
      };
    }),
  };
}

/**
 * Where each one is, when its client shares it in a form worth telling: the
 * web app's active table cell (on this sheet), or a doc editor's selection
 * as positions of the body as `GET /doc` returns it. Anything else a client
 * puts in its awareness state is left out.
 */
async function describeCursors(services: Services, documentName: string, surface: Surface, present: PresentPrincipal[]): Promise<Array<PresenceCursor | undefined>> {
  const out: Array<PresenceCursor | undefined> = present.map(({ cursor }) =>
    cursor && 'cell' in cursor && surface.kind === 'table' && cursor.cell.surfaceId === surface.id
      ? { type: 'cell', rowId: cursor.cell.rowId, column: cursor.cell.key }
      : undefined,
  );
  if (surface.kind !== 'doc') return out;
  const selections = present.map(({ cursor }) => (cursor && 'anchor' in cursor ? relativeSelection(cursor) : null));
  if (selections.every((selection) => selection === null)) return out;
  const positions = await services.sync.read(documentName, (doc) => bodyPositionsOf(doc, selections.flatMap((s) => (s ? [s.anchor, s.head] : []))));
  let next = 0;
  selections.forEach((selection, i) => {
    if (!selection) return;
    const anchor = positions[next++];
    const head = positions[next++];
    if (anchor !== null && anchor !== undefined && head !== null && head !== undefined) out[i] = { type: 'doc', anchor, head };
  });
  return out;
}

function relativeSelection(cursor: Extract<RawCursor, { anchor: unknown }>): { anchor: Y.RelativePosition; head: Y.RelativePosition } | null {
  try {
    return { anchor: Y.createRelativePositionFromJSON(cursor.anchor), head: Y.createRelativePositionFromJSON(cursor.head) };
  } catch {
    // A client's awareness state is whatever it sent: a cursor that is no relative position is not described.
    return null;
  }
}
