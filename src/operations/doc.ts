import { z } from 'zod';
import { docToMarkdown, docToText } from '../model/doc/markdown';
import { appendDoc, readDoc, replaceDoc } from '../domain/docs';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import { BaseVersion, PreconditionFailed } from '../model/schemas/common';
import { Accepted, defineOperation } from './operation';
import { suggestDocReplacement, suggestDocSection } from '../domain/suggestions';
import { SuggestionCreated, WriteMode } from '../model/schemas/suggestions';
import { withSuggestionsRejected } from '../model/doc/suggestions';
import { ModeQuery, withModeFromQuery } from './write-mode';
import { AttributionFlag, attributionWanted, DocAttribution } from '../model/schemas/attribution';
import { readDocAttribution } from '../domain/attribution';
import { ADDRESS, DESTRUCTIVE, READ, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';
import { DOC_EXPORT_FORMATS, EXPORT_CONTENT_TYPES, exportDocFile, type DocExportFormat } from '../domain/doc-io';

export const DocSurfaceQuery = {
  surface: z.string().min(1).max(100).optional().describe('Doc surface slug; the primary (first) doc surface when omitted'),
  surfaceId: z.string().min(1).max(100).optional(),
};

export const GetDocQuery = z.strictObject({
  format: z.enum(['markdown', 'text']).optional().describe('`markdown` (CommonMark + GFM) or `text`; omitted: ProseMirror JSON in `content`'),
  suggestions: z
    .enum(['exclude', 'include'])
    .optional()
    .describe('`exclude` (default): the doc as if every open suggestion were rejected; `include`: with them (their marks in `content`, CriticMarkup `{++…++}` / `{--…--}` in Markdown)'),
  ...DocSurfaceQuery,
});

const ProseMirrorDoc = z
  .unknown()
  .describe('ProseMirror JSON (`{ type: "doc", content: [...] }`) in the schema of docs/SYNC-DOCUMENTS.md; invalid content gives 400 with the path of the node')
  .meta({ id: 'ProseMirrorDoc' });

const DocContent = z.object({ surfaceId: z.string(), content: ProseMirrorDoc }).meta({ id: 'DocContent' });
export const DocResponse = z.union([DocContent, z.object({ surfaceId: z.string(), markdown: z.string() }), z.object({ surfaceId: z.string(), text: z.string() }), DocAttribution]);

/** Over REST the read also answers who wrote what (docs/ATTRIBUTION.md). */
const GetDocRestQuery = GetDocQuery.extend({
  format: z
    .enum(['markdown', 'text', ...DOC_EXPORT_FORMATS])
    .optional()
    .describe('`markdown` (CommonMark + GFM) or `text`; `docx`, `pdf` or `html`: the doc as a file (an attachment); omitted: ProseMirror JSON in `content`'),
  attribution: AttributionFlag.optional().describe('`1`: `{ surfaceId, spans }`, the text of `format=text` cut into spans by the principal whose update inserted it (JSON whatever `format` or Accept say)'),
});

// One of the two is required; the domain answers 400 when both are missing.
export const PutDocBody = z.strictObject({
  content: ProseMirrorDoc.optional(),
  markdown: z.string().optional().describe('CommonMark + GFM; ignored when `content` is given'),
  baseVersion: BaseVersion.optional(),
  mode: WriteMode,
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

export const SectionsBody = z.strictObject({ markdown: z.string().describe('CommonMark + GFM; its blocks are appended at the end of the doc'), mode: WriteMode });

const SUGGEST_DOC =
  'With `mode: "suggest"` (or `?mode=suggest`) nothing is applied: the change is proposed as a suggestion (marks in the doc that everyone sees live) ' +
  'and the answer is 202 `{ suggestion }`; an editor accepts or rejects it (docs/SUGGESTIONS.md). A suggest-only key must send its writes this way.';

/**
 * The doc body of a workspace's doc surface: ProseMirror JSON, Markdown or
 * plain text (API-DECISIONS, "Sync documents" and "Workspaces and surfaces").
 * REST routes and MCP tools (in this order in tools/list).
 */
export const docOperations = {
  read: defineOperation(
    {
      params: WorkspaceParams, query: GetDocQuery, response: DocResponse,
      rest: {
        method: 'GET',
        workspacePath: '/doc',
        summary: 'Read the doc body',
        description:
          'ProseMirror JSON in `content` by default; `format=markdown` gives `{ markdown }`, `format=text` gives `{ text }`. ' +
          'Without `format`, `Accept: text/markdown` or `Accept: text/plain` returns the raw body with that Content-Type. ' +
          'The `ETag` header is the version token of what was read: send it back as `If-Match` (or `baseVersion`) with PUT. ' +
          '`attribution=1` gives `{ surfaceId, spans }` instead: the plain text in order, each span with the principal (an agent with its `owner`) ' +
          "whose update inserted it, from the update log's own attribution (docs/ATTRIBUTION.md). " +
          '404 when the workspace has no doc surface.',
        tags: ['doc'],
        querystring: GetDocRestQuery,
        config: { auth: 'optional' },
        files: {
          types: EXPORT_CONTENT_TYPES,
          description:
            '`format=docx` gives a Word file, `format=pdf` a PDF (selectable text in embedded Noto fonts covering Latin, Cyrillic, Greek and Chinese, with images, tables and page numbers), ' +
            '`format=html` a standalone HTML page: each streamed as an attachment named after the surface, open suggestions left out (docs/IMPORT-EXPORT.md). ' +
            'At most two exports or imports run at once per organisation (429 beyond).',
          run: async (services, actor, request, format) => {
            const { params, query } = request as { params: z.output<typeof WorkspaceParams>; query: z.output<typeof GetDocRestQuery> };
            const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
            return exportDocFile(services, workspace, { surface: query.surface, surfaceId: query.surfaceId }, format as DocExportFormat);
          },
        },
        raw: {
          description: 'The doc body',
          types: {
            'text/markdown': z.string().describe('The body as CommonMark + GFM'),
            'text/plain': z.string().describe('The body as plain text'),
          },
        },
      },
      mcp: {
        name: 'get_doc',
        title: 'Read a doc',
        description: `The body of a doc surface (the first one unless \`surface\` is given): \`format: "markdown"\` for CommonMark + GFM (best for reading), \`"text"\` for plain text, omitted for ProseMirror JSON. ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }, http) => {
      // The answer depends on Accept over REST (rest.raw), whatever it turns out to be.
      http?.header('vary', 'Accept');
      const { workspace } = await resolveWorkspace(services, actor, addressOf(params), 'read');
      const { format, suggestions, attribution, ...selector } = query as z.output<typeof GetDocRestQuery>;
      if (attributionWanted(attribution)) return readDocAttribution(services, workspace, selector, { suggestions });
      const { surface, body: stored, etag } = await readDoc(services, workspace, selector);
      const body = suggestions === 'include' ? stored : withSuggestionsRejected(stored);
      http?.header('etag', etag);
      if (format === 'markdown') return { surfaceId: surface.id, markdown: docToMarkdown(body) };
      if (format === 'text') return { surfaceId: surface.id, text: docToText(body) };
      return { surfaceId: surface.id, content: body.toJSON() };
    },
  ),
  replace: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(DocSurfaceQuery), body: PutDocBody, response: PutDocResponse, accepted: SuggestionCreated,
      rest: {
        method: 'PUT',
        workspacePath: '/doc',
        summary: 'Replace the doc body',
        description:
          '`content` (ProseMirror JSON) or `markdown`; `content` wins when both are sent. Applied as one Y transaction that changes only the blocks ' +
          'that differ, so sync clients editing other blocks keep their edits. Creates a `doc` surface when the workspace has none. Answers the body as stored. ' +
          'With a base version (`If-Match: <ETag of the read>` or `baseVersion`), the body is merged as a diff against that base: only the blocks you ' +
          'changed are applied, what others wrote since stays, and blocks both changed keep their version and are listed in `conflicts`; the answer is ' +
          'then the current body with its new `ETag`. 412 when the token is not one of this doc, or `base_unavailable` when it is too old (docs/VERSIONS.md). ' +
          SUGGEST_DOC,
        tags: ['doc'],
        querystring: z.strictObject({ ...DocSurfaceQuery, ...ModeQuery }),
        input: withModeFromQuery,
        responses: { 412: PreconditionFailed },
      },
      mcp: {
        name: 'replace_doc',
        title: 'Replace a doc',
        description: `Replaces the whole body of a doc surface with \`markdown\` (or ProseMirror JSON \`content\`); blocks that did not change are kept, so people editing them keep their work. To add text at the end, use append_doc_section. With \`mode: "suggest"\` the change is only proposed, for an editor to accept or reject (answers \`{ suggestion }\`). ${ADDRESS}`,
        annotations: { ...DESTRUCTIVE, idempotentHint: true },
        joinsRuns: true,
      },
    },
    async (services, actor, { params, query, body }, http) => {
      const caller = requireCaller(actor);
      if (body.mode === 'suggest') {
        const resolved = await resolveWorkspace(services, caller, addressOf(params), 'suggest');
        return new Accepted({ suggestion: await suggestDocReplacement(services, caller, resolved, query, body) });
      }
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      const { baseVersion, mode: _mode, ...input } = body;
      const { surface, body: stored, etag, conflicts } = await replaceDoc(services, caller, resolved, query, { ...input, base: { ifMatch: http?.ifMatch, baseVersion } });
      if (etag) http?.header('etag', etag);
      return { surfaceId: surface.id, content: stored.toJSON(), ...(conflicts ? { conflicts } : {}) };
    },
  ),
  appendSection: defineOperation(
    {
      params: WorkspaceParams, query: z.strictObject(DocSurfaceQuery), body: SectionsBody, response: z.object({ surfaceId: z.string(), appendedBlocks: z.number().int() }),
      accepted: SuggestionCreated,
      rest: {
        method: 'POST',
        workspacePath: '/doc/sections',
        summary: 'Append Markdown to the doc',
        description: `Parses \`markdown\` and appends its blocks at the end of the body without touching the others. Answers how many blocks were appended. ${SUGGEST_DOC}`,
        tags: ['doc'],
        querystring: z.strictObject({ ...DocSurfaceQuery, ...ModeQuery }),
        input: withModeFromQuery,
      },
      mcp: {
        name: 'append_doc_section',
        title: 'Append to a doc',
        description: `Appends \`markdown\` (headings, lists, tables, code) at the end of a doc surface without touching what is there. With \`mode: "suggest"\` the blocks are only proposed, for an editor to accept or reject (answers \`{ suggestion }\`). ${ADDRESS}`,
        annotations: WRITE,
        joinsRuns: true,
      },
    },
    async (services, actor, { params, query, body }) => {
      const caller = requireCaller(actor);
      if (body.mode === 'suggest') {
        const resolved = await resolveWorkspace(services, caller, addressOf(params), 'suggest');
        return new Accepted({ suggestion: await suggestDocSection(services, caller, resolved, query, body.markdown) });
      }
      const resolved = await resolveWorkspace(services, caller, addressOf(params), 'edit_doc');
      const { surface, appendedBlocks } = await appendDoc(services, caller, resolved, query, body.markdown);
      return { surfaceId: surface.id, appendedBlocks };
    },
  ),
};
