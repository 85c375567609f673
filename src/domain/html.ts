import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import type { ResolvedWorkspace } from './resolved-workspace';
import { sanitizeHtml } from '../files/sanitize';
import type { Surface, Workspace } from '../persistence/schema';
import { findSurface } from '../persistence/workspaces';
import type { Services } from './services';
import { surfaceDocumentName } from '../model/document-names';
import { readHtml, replaceHtml } from '../model/html';
import { callerOrigin, type ServerChangeContext } from '../sync/origins';

/**
 * Html surfaces: a page of HTML in the surface's own Y document
 * (src/model/html.ts), sanitised on every write through the API
 * (src/files/sanitize.ts). A write is one Y transaction attributed to the
 * caller and emits `doc.updated` with the surface.
 */

export async function findHtmlSurface(services: Services, workspace: Workspace, slugOrId: string): Promise<Surface> {
  const surface = await findSurface(services.db, workspace.id, slugOrId);
  if (!surface || surface.kind !== 'html') throw errors.notFound('Html surface');
  return surface;
}

function documentOf(surface: Surface): string {
  return surfaceDocumentName(surface.workspaceId, surface)!;
}

export async function readHtmlSurface(services: Services, workspace: Workspace, slugOrId: string): Promise<{ surface: Surface; html: string }> {
  const surface = await findHtmlSurface(services, workspace, slugOrId);
  // Sanitised on the way out too: a sync client writes the Y.Text directly, past the PUT's sanitiser.
  const html = sanitizeHtml(await services.sync.read(documentOf(surface), readHtml));
  return { surface, html };
}

/** Sanitises and stores `html`; answers what was stored. Writing the same page again changes nothing and emits nothing. */
export async function writeHtmlSurface(
  services: Services,
  actor: Actor,
  resolved: ResolvedWorkspace,
  slugOrId: string,
  html: string,
  via: ServerChangeContext['via'] = 'rest',
): Promise<{ surface: Surface; html: string }> {
  const surface = await findHtmlSurface(services, resolved.workspace, slugOrId);
  const clean = sanitizeHtml(html);
  const origin = callerOrigin(actor, via);
  const stored = await services.sync.transact(documentOf(surface), origin, (doc) => {
    replaceHtml(doc, clean, origin);
    return readHtml(doc);
  });
  return { surface, html: stored };
}
