import { z } from 'zod';
import { readHtmlSurface, writeHtmlSurface } from '../domain/html';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { defineOperation } from './operation';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { HtmlPage } from '../model/schemas/workspaces';

const HtmlParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Html surface slug (or id)') });
const HtmlBody = z.strictObject({ html: z.string().max(5_000_000).describe('HTML; sanitised before it is stored') });

/** The page of an html surface (API-DECISIONS, "Workspaces and surfaces"). */
export const htmlOperations = {
  read: defineOperation(
    {
      params: HtmlParams, response: HtmlPage,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces/:surfaceSlug/html',
        summary: 'Read an html surface',
        description: 'The stored (sanitised) HTML of the surface. 404 when the surface is not an html surface.',
        tags: ['html'],
        config: { auth: 'optional' },
      },
    },
    async (services, actor, { params }) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { surface, html } = await readHtmlSurface(services, workspace, params.surfaceSlug);
      return { surfaceId: surface.id, html };
    },
  ),
  replace: defineOperation(
    {
      params: HtmlParams, body: HtmlBody, response: HtmlPage,
      rest: {
        method: 'PUT',
        workspacePath: '/surfaces/:surfaceSlug/html',
        summary: 'Replace an html surface',
        description:
          'Sanitised on write: scripts, event handlers, `javascript:` URLs, iframes, objects, embeds and forms are removed; styles, inline SVG and ' +
          'MathML stay (see docs/SYNC-DOCUMENTS.md). Answers the HTML as stored. Emits `doc.updated` with the surface. Editor.',
        tags: ['html'],
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      const { surface, html } = await writeHtmlSurface(services, caller, resolved, params.surfaceSlug, body.html);
      return { surfaceId: surface.id, html };
    },
  ),
};
