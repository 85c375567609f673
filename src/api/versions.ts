import { z } from 'zod';
import { docFromJSONLenient } from '../docs/json';
import { docToMarkdown, docToText } from '../docs/markdown';
import { diffVersions, findVersionedSurface, listSurfaceVersions, nameVersion, restoreVersion, showVersion } from '../domain/versions';
import { errors } from '../errors';
import { requireActor } from '../http/authenticate';
import type { App } from '../http/types';
import { resolveWorkspace } from '../http/workspace-access';
import { addressOf, workspacePaths, WorkspaceParams } from '../http/workspace-routes';
import type { Services } from '../services';
import { negotiate } from './doc';
import { errorResponses, OverLimitBody, Principal } from './schemas';
import { Column, RowData } from './table-schemas';

const SurfaceParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Doc, html or table surface slug (or id)') });
const VersionParams = SurfaceParams.extend({ versionId: z.string().min(1).max(100) });

const Changes = z.object({
  unit: z.enum(['rows', 'blocks', 'lines']).describe('rows for a sheet, top-level blocks for a doc, lines for an html page'),
  added: z.number().int(),
  removed: z.number().int(),
  changed: z.number().int(),
  columnsChanged: z.boolean().optional().describe('Sheets: whether any column was added, removed or changed'),
});

export const Version = z
  .object({
    id: z.string(),
    surfaceId: z.string(),
    kind: z.enum(['auto', 'named']).describe('`auto`: a point of an editing session; `named`: named by someone, kept whatever the plan'),
    name: z.string().nullable(),
    createdAt: z.string().describe('auto: when the last edit it holds was made; named: when it was named'),
    createdBy: Principal.describe('auto: whose edit ends it; named: who named it'),
    editors: z.array(z.object({ principal: Principal, edits: z.number().int().describe('logged updates, e.g. one per REST write or per typing burst message') })).describe(
      'Who changed the surface since the previous version',
    ),
    changes: Changes.describe('What changed since the previous version'),
    etag: z.string().describe('Version token of this state: a base for writes (If-Match)'),
  })
  .meta({ id: 'Version' });

const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.string().max(500).optional().describe('The nextCursor of the previous page'),
});

const ListResponse = z.object({
  versions: z.array(Version).describe('Newest first'),
  nextCursor: z.string().nullable(),
  history: z.object({
    since: z.string().nullable().describe('History starts here (what the log held when version history began); null: from the start'),
    retentionDays: z.number().int().nullable().describe("How long automatic versions are kept on the organisation's plan; null: for ever"),
  }),
});

const NameBody = z.strictObject({ name: z.string().trim().min(1).max(200).describe('What to call the current state') });

const ShowQuery = z.strictObject({
  format: z.enum(['markdown', 'text']).optional().describe('Doc surfaces, as GET /doc: `markdown` or `text`; omitted: ProseMirror JSON'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000).describe('Table surfaces: rows per page'),
  after: z.string().max(200).optional().describe('Table surfaces: the nextCursor of the previous page'),
});

const VersionRow = z.object({ id: z.string(), workspaceId: z.string(), surfaceId: z.string(), position: z.number().int(), data: RowData }).meta({ id: 'VersionRow' });

const ShowResponse = z.union([
  z.object({ version: Version, surfaceId: z.string(), content: z.unknown().describe('ProseMirror JSON') }),
  z.object({ version: Version, surfaceId: z.string(), markdown: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), text: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), html: z.string() }),
  z.object({ version: Version, surfaceId: z.string(), columns: z.array(Column), rows: z.array(VersionRow), nextCursor: z.string().nullable() }),
]);

const DiffQuery = z.strictObject({ to: z.string().min(1).max(100).default('current').describe('Another version id, or `current` (the default)') });

const BlockSide = z.object({ markdown: z.string(), node: z.unknown() });
const SequenceOp = z.enum(['added', 'removed', 'changed']);
const Cells = z.record(z.string(), z.object({ before: z.unknown().optional(), after: z.unknown().optional() }));
const DiffBody = z.union([
  z.object({
    kind: z.literal('doc'),
    blocks: z.array(z.object({ op: SequenceOp, from: z.number().int().optional(), to: z.number().int().optional(), before: BlockSide.optional(), after: BlockSide.optional() })),
  }),
  z.object({
    kind: z.literal('html'),
    lines: z.array(z.object({ op: SequenceOp, from: z.number().int().optional(), to: z.number().int().optional(), before: z.string().optional(), after: z.string().optional() })),
  }),
  z.object({
    kind: z.literal('sheet'),
    columns: z.object({ added: z.array(Column), removed: z.array(Column), changed: z.array(z.object({ id: z.string(), before: Column, after: Column })) }),
    rows: z.object({
      added: z.array(z.object({ id: z.string(), position: z.number().int(), data: RowData })),
      removed: z.array(z.object({ id: z.string(), position: z.number().int(), data: RowData })),
      changed: z.array(z.object({ id: z.string(), position: z.number().int(), cells: Cells })),
    }),
    reordered: z.boolean(),
  }),
]);
const DiffResponse = z.object({
  from: Version,
  to: z.union([Version, z.object({ current: z.literal(true), etag: z.string() })]),
  changes: Changes,
  diff: DiffBody,
});

const RestoreResponse = z.object({
  restored: Version,
  undo: Version.describe('The state just before the restore; restoring it undoes this one'),
});

/**
 * Version history of doc, html and table surfaces (docs/VERSIONS.md).
 * Reading it and naming or restoring versions are editor actions.
 */
export async function versionRoutes(app: App, services: Services) {
  for (const url of workspacePaths('/surfaces/:surfaceSlug/versions')) {
    app.get(
      url,
      {
        schema: {
          summary: 'List versions of a surface',
          description:
            'Automatic versions (the points of editing sessions: a principal’s edits, at most 10 minutes per session) and named ones, newest first, ' +
            'with who edited since the previous version and counts of what changed. For a table surface these are versions of its sheet. Editor.',
          tags: ['versions'],
          params: SurfaceParams,
          querystring: ListQuery,
          response: { 200: ListResponse, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_versions');
        const versioned = await findVersionedSurface(services, resolved.workspace, request.params.surfaceSlug);
        return listSurfaceVersions(services, resolved.orgPlan, versioned, request.query);
      },
    );

    app.post(
      url,
      {
        schema: {
          summary: 'Name the current state',
          description: 'Keeps the surface as it is now as a named version (never removed by retention). Emits `version.created`. Editor.',
          tags: ['versions'],
          params: SurfaceParams,
          body: NameBody,
          response: { 200: Version, ...errorResponses },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'write_versions');
        const versioned = await findVersionedSurface(services, resolved.workspace, request.params.surfaceSlug);
        return nameVersion(services, actor, resolved, versioned, request.body.name);
      },
    );
  }

  for (const url of workspacePaths('/surfaces/:surfaceSlug/versions/:versionId')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Show a version',
          description:
            'The surface as it was. Doc: ProseMirror JSON in `content`, or `format=markdown|text`, or the raw body for `Accept: text/markdown|text/plain` ' +
            '(as GET /doc). Html: `html`. Table: the sheet’s `columns` and its `rows` (paged with `limit` and `after`). Editor.',
          tags: ['versions'],
          params: VersionParams,
          querystring: ShowQuery,
          response: {
            200: {
              description: 'The surface at that version',
              content: {
                'application/json': { schema: ShowResponse },
                'text/markdown': { schema: z.string() },
                'text/plain': { schema: z.string() },
              },
            },
            ...errorResponses,
          },
        },
        config: { auth: 'optional' },
      },
      async (request, reply) => {
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_versions');
        const versioned = await findVersionedSurface(services, resolved.workspace, request.params.surfaceSlug);
        const { version, content } = await showVersion(services, versioned, request.params.versionId);
        const surfaceId = versioned.surface.id;
        reply.header('etag', version.etag);
        if (content.kind === 'html') return { version, surfaceId, html: content.html };
        if (content.kind === 'sheet') {
          const from = request.query.after ? offsetOf(request.query.after) : 0;
          const rows = content.rows.slice(from, from + request.query.limit).map((row, i) => ({ ...row, workspaceId: resolved.workspace.id, surfaceId, position: from + i }));
          const next = from + rows.length < content.rows.length ? Buffer.from(String(from + rows.length)).toString('base64url') : null;
          return { version, surfaceId, columns: content.columns, rows, nextCursor: next };
        }
        const body = docFromJSONLenient(content.content);
        reply.header('vary', 'Accept');
        if (request.query.format === 'markdown') return { version, surfaceId, markdown: docToMarkdown(body) };
        if (request.query.format === 'text') return { version, surfaceId, text: docToText(body) };
        const wanted = negotiate(request.headers.accept);
        if (wanted === 'text/markdown') return reply.type('text/markdown; charset=utf-8').send(docToMarkdown(body));
        if (wanted === 'text/plain') return reply.type('text/plain; charset=utf-8').send(docToText(body));
        return { version, surfaceId, content: body.toJSON() };
      },
    );
  }

  for (const url of workspacePaths('/surfaces/:surfaceSlug/versions/:versionId/diff')) {
    app.get(
      url,
      {
        schema: {
          summary: 'Compare two versions',
          description:
            'What changed from this version to `to` (another version, or `current`): doc blocks added, removed and changed (with Markdown), html lines, ' +
            'or a sheet’s columns and rows (added, removed, changed cells with before and after). Editor.',
          tags: ['versions'],
          params: VersionParams,
          querystring: DiffQuery,
          response: { 200: DiffResponse, ...errorResponses },
        },
        config: { auth: 'optional' },
      },
      async (request) => {
        const resolved = await resolveWorkspace(services, request.actor, addressOf(request.params), 'read_versions');
        const versioned = await findVersionedSurface(services, resolved.workspace, request.params.surfaceSlug);
        return diffVersions(services, versioned, request.params.versionId, request.query.to);
      },
    );
  }

  for (const url of workspacePaths('/surfaces/:surfaceSlug/versions/:versionId/restore')) {
    app.post(
      url,
      {
        schema: {
          summary: 'Restore a version',
          description:
            'Makes the surface look as it did, as one new change by the caller on top of the current state: nothing in the history is rewritten, ' +
            'connected clients see it at once, and the usual events are emitted (plus `version.restored`). `undo` is the state just before: ' +
            'restoring it undoes the restore. Editor; 402 when a sheet would exceed the plan’s row cap.',
          tags: ['versions'],
          params: VersionParams,
          response: { 200: RestoreResponse, ...errorResponses, 402: OverLimitBody },
        },
      },
      async (request) => {
        const actor = requireActor(request);
        const resolved = await resolveWorkspace(services, actor, addressOf(request.params), 'write_versions');
        const versioned = await findVersionedSurface(services, resolved.workspace, request.params.surfaceSlug);
        return restoreVersion(services, actor, resolved, versioned, request.params.versionId);
      },
    );
  }
}

function offsetOf(cursor: string): number {
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const offset = /^\d{1,15}$/.test(decoded) ? Number(decoded) : NaN;
  if (!Number.isSafeInteger(offset)) {
    throw errors.badRequest('Invalid cursor: pass the nextCursor of the previous page.', [{ path: ['after'], code: 'invalid_cursor', message: 'not a cursor of this version' }]);
  }
  return offset;
}
