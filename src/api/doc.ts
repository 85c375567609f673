import { z } from 'zod';
import { docToMarkdown, docToText } from '../model/doc/markdown';
import { appendDoc, readDoc, replaceDoc } from '../domain/docs';
import { requireCaller } from '../access/callers';
import { httpExchange } from '../http/exchange';
import { defineOperation } from '../operations/operation';
import type { App } from '../http/types';
import { resolveWorkspace } from '../access/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../operations/workspace-routes';
import type { Services } from '../services';
import { BaseVersion, errorResponses, PreconditionFailed } from '../model/schemas/common';

export const DocSurfaceQuery = {
  surface: z.string().min(1).max(100).optional().describe('Doc surface slug; the primary (first) doc surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
};

export const GetDocQuery = z.strictObject({
  format: z.enum(['markdown', 'text']).optional().describe('`markdown` (CommonMark + GFM) or `text`; omitted: ProseMirror JSON in `content`'),
  ...DocSurfaceQuery,
});

const ProseMirrorDoc = z
  .unknown()
  .describe('ProseMirror JSON (`{ type: "doc", content: [...] }`) in the schema of docs/SYNC-DOCUMENTS.md; invalid content gives 400 with the path of the node')
  .meta({ id: 'ProseMirrorDoc' });

const DocContent = z.object({ surfaceId: z.string(), content: ProseMirrorDoc }).meta({ id: 'DocContent' });
export const DocResponse = z.union([DocContent, z.object({ surfaceId: z.string(), markdown: z.string() }), z.object({ surfaceId: z.string(), text: z.string() })]);

// One of the two is required; the domain answers 400 when both are missing.
export const PutDocBody = z.strictObject({
  content: ProseMirrorDoc.optional(),
  markdown: z.string().optional().describe('CommonMark + GFM; ignored when `content` is given'),
  baseVersion: BaseVersion.optional(),
});

const DocConflict = z
  .object({
    at: z.number().int().describe('Index of the kept blocks in the stored body'),
    base: z.string().describe('The blocks as they were in the base version (Markdown)'),
    yours: z.string().describe('Your version of them, not applied (Markdown)'),
    theirs: z.string().describe('What someone else made of them since, kept (Markdown)'),
  })
  .meta({ id: 'DocConflict' });

const PutDocResponse = DocContent.extend({
  conflicts: z.array(DocConflict).optional().describe('Only for a write with a base: blocks both you and someone else changed since the base'),
});

export const SectionsBody = z.strictObject({ markdown: z.string().describe('CommonMark + GFM; its blocks are appended at the end of the doc') });

/** Media types GET /doc can answer with, in the order preferred on a tie. */
const RAW_TYPES = ['application/json', 'text/markdown', 'text/plain'] as const;
type RawType = (typeof RAW_TYPES)[number];

/** Each route's policy check and domain call; the MCP tools (src/mcp/tools.ts) run the same ones. */
export const docOperations = {
  read: defineOperation(
    { params: WorkspaceParams, query: GetDocQuery, response: DocResponse },
    async (services, actor, { params, query }, http) => {
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { format, ...selector } = query;
      const { surface, body, etag } = await readDoc(services, workspace, selector);
      http?.header('etag', etag);
      if (format === 'markdown') return { surfaceId: surface.id, markdown: docToMarkdown(body) };
      if (format === 'text') return { surfaceId: surface.id, text: docToText(body) };
      return { surfaceId: surface.id, content: body.toJSON() };
    },
  ),
  replace: defineOperation(
    { params: WorkspaceParams, query: z.strictObject(DocSurfaceQuery), body: PutDocBody, response: PutDocResponse },
    async (services, actor, { params, query, body }, http) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      const { baseVersion, ...input } = body;
      const { surface, body: stored, etag, conflicts } = await replaceDoc(services, caller, resolved, query, { ...input, base: { ifMatch: http?.ifMatch, baseVersion } });
      if (etag) http?.header('etag', etag);
      return { surfaceId: surface.id, content: stored.toJSON(), ...(conflicts ? { conflicts } : {}) };
    },
  ),
  appendSection: defineOperation(
    { params: WorkspaceParams, query: z.strictObject(DocSurfaceQuery), body: SectionsBody, response: z.object({ surfaceId: z.string(), appendedBlocks: z.number().int() }) },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      const { surface, appendedBlocks } = await appendDoc(services, caller, resolved, query, body.markdown);
      return { surfaceId: surface.id, appendedBlocks };
    },
  ),
};

/**
 * The doc body of a workspace's doc surface: ProseMirror JSON, Markdown or
 * plain text (API-DECISIONS, "Sync documents" and "Workspaces and surfaces").
 */
export async function docRoutes(app: App, services: Services) {
  const { read, replace, appendSection } = docOperations;
  for (const url of workspacePaths('/doc')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Read the doc body',
          description:
            'ProseMirror JSON in `content` by default; `format=markdown` gives `{ markdown }`, `format=text` gives `{ text }`. ' +
            'Without `format`, `Accept: text/markdown` or `Accept: text/plain` returns the raw body with that Content-Type. ' +
            'The `ETag` header is the version token of what was read: send it back as `If-Match` (or `baseVersion`) with PUT. ' +
            '404 when the workspace has no doc surface.',
          tags: ['doc'],
          params: read.params,
          querystring: read.query,
          response: {
            200: {
              description: 'The doc body',
              content: {
                'application/json': { schema: read.response },
                'text/markdown': { schema: z.string().describe('The body as CommonMark + GFM') },
                'text/plain': { schema: z.string().describe('The body as plain text') },
              },
            },
            ...errorResponses,
          },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        reply.header('vary', 'Accept');
        const wanted = request.query.format ? 'application/json' : negotiate(request.headers.accept);
        const http = httpExchange(request, reply);
        if (wanted === 'application/json') return read.run(services, request.actor, request, http);
        const format = wanted === 'text/markdown' ? 'markdown' : 'text';
        const raw = (await read.run(services, request.actor, { ...request, query: { ...request.query, format } }, http)) as { markdown?: string; text?: string };
        return reply.type(`${wanted}; charset=utf-8`).send(raw.markdown ?? raw.text ?? '');
      },
    );

    app.put(
      url,
      {
        schema: {
          summary: 'Replace the doc body',
          description:
            '`content` (ProseMirror JSON) or `markdown`; `content` wins when both are sent. Applied as one Y transaction that changes only the blocks ' +
            'that differ, so sync clients editing other blocks keep their edits. Creates a `doc` surface when the workspace has none. Answers the body as stored. ' +
            'With a base version (`If-Match: <ETag of the read>` or `baseVersion`), the body is merged as a diff against that base: only the blocks you ' +
            'changed are applied, what others wrote since stays, and blocks both changed keep their version and are listed in `conflicts`; the answer is ' +
            'then the current body with its new `ETag`. 412 when the token is not one of this doc, or `base_unavailable` when it is too old (docs/VERSIONS.md).',
          tags: ['doc'],
          params: replace.params,
          querystring: replace.query,
          body: replace.body,
          response: { 200: replace.response, ...errorResponses, 412: PreconditionFailed },
        },
      },
      async (request, reply) => replace.run(services, request.actor, request, httpExchange(request, reply)),
    );
  }

  for (const url of workspacePaths('/doc/sections')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Append Markdown to the doc',
          description: 'Parses `markdown` and appends its blocks at the end of the body without touching the others. Answers how many blocks were appended.',
          tags: ['doc'],
          params: appendSection.params,
          querystring: appendSection.query,
          body: appendSection.body,
          response: { 200: appendSection.response, ...errorResponses },
        },
      },
      async (request) => appendSection.run(services, request.actor, request),
    );
  }
}

/**
 * The best of JSON, Markdown and plain text for an Accept header: highest
 * q wins, an exact type beats `text/*` beats `*\/*`, ties go to JSON. No
 * header (or nothing acceptable) means JSON, the documented default.
 */
export function negotiate(accept: string | undefined): RawType {
  if (!accept) return 'application/json';
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { range: range.trim(), q: q ? Number(q.slice(2)) : 1 };
  });
  let best: { type: RawType; q: number; specificity: number } | null = null;
  for (const type of RAW_TYPES) {
    for (const { range, q } of ranges) {
      const specificity = range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
      if (specificity < 0 || !(q > 0)) continue;
      if (!best || q > best.q || (q === best.q && specificity > best.specificity)) best = { type, q, specificity };
    }
  }
  return best?.type ?? 'application/json';
}
