import { z } from 'zod';
import { readHtmlSurface, writeHtmlSurface } from '../domain/html';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { Services } from '../services';
import { errorResponses } from '../model/schemas/common';

const HtmlParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Html surface slug (or id)') });
const HtmlPage = z.object({ surfaceId: z.string(), html: z.string() }).meta({ id: 'HtmlPage' });
const HtmlBody = z.strictObject({ html: z.string().max(5_000_000).describe('HTML; sanitised before it is stored') });

/** The page of an html surface (API-DECISIONS, "Workspaces and surfaces"). */
export async function htmlRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/surfaces/:surfaceSlug/html')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Read an html surface',
          description: 'The stored (sanitised) HTML of the surface. 404 when the surface is not an html surface.',
          tags: ['html'],
          params: HtmlParams,
          response: { 200: HtmlPage, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const { workspace } = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read');
        const { surface, html } = await readHtmlSurface(services, workspace, request.params.surfaceSlug);
        return { surfaceId: surface.id, html };
      },
    );

    app.put(
      url,
      {
        schema: {
          summary: 'Replace an html surface',
          description:
            'Sanitised on write: scripts, event handlers, `javascript:` URLs, iframes, objects, embeds and forms are removed; styles, inline SVG and ' +
            'MathML stay (see docs/SYNC-DOCUMENTS.md). Answers the HTML as stored. Emits `doc.updated` with the surface. Editor.',
          tags: ['html'],
          params: HtmlParams,
          body: HtmlBody,
          response: { 200: HtmlPage, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'edit_doc');
        const { surface, html } = await writeHtmlSurface(services, actor, resolved, request.params.surfaceSlug, request.body.html);
        return { surfaceId: surface.id, html };
      },
    );
  }
}
