import { z } from 'zod';
import { docFromJSONLenient } from '../model/doc/json';
import { docToMarkdown, docToText } from '../model/doc/markdown';
import { diffVersions, findVersionedSurface, listSurfaceVersions, nameVersion, restoreVersion, showVersion } from '../domain/versions';
import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { requireCaller } from '../access/callers';
import { resolveWorkspace } from '../access/workspace-access';
import type { Services } from '../domain/services';
import { OverLimitBody } from '../model/schemas/common';
import { DiffResponse, ListResponse, RestoreResponse, ShowResponse, Version } from '../model/schemas/versions';
import { defineOperation } from './operation';
import { ADDRESS, DESTRUCTIVE, READ, SURFACE, VERSION, WRITE } from './tool-text';
import { addressOf, WorkspaceParams } from './workspace-routes';

const SurfaceParams = WorkspaceParams.extend({ surfaceSlug: z.string().min(1).max(100).describe('Doc, html or table surface slug (or id)') });
const VersionParams = SurfaceParams.extend({ versionId: z.string().min(1).max(100) });

const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.string().max(500).optional().describe('The nextCursor of the previous page'),
});

const NameBody = z.strictObject({ name: z.string().trim().min(1).max(200).describe('What to call the current state') });

const ShowQuery = z.strictObject({
  format: z.enum(['markdown', 'text']).optional().describe('Doc surfaces, as GET /doc: `markdown` or `text`; omitted: ProseMirror JSON'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000).describe('Table surfaces: rows per page'),
  after: z.string().max(200).optional().describe('Table surfaces: the nextCursor of the previous page'),
});

const DiffQuery = z.strictObject({ to: z.string().min(1).max(100).default('current').describe('Another version id, or `current` (the default)') });

/** Finds the surface of a version route after the route's policy check. */
async function versionedSurface(services: Services, actor: Actor | null, params: z.output<typeof SurfaceParams>, action: 'read_versions' | 'write_versions') {
  const resolved = await resolveWorkspace(services, actor, addressOf(params), action);
  return { resolved, versioned: await findVersionedSurface(services, resolved.workspace, params.surfaceSlug) };
}

/**
 * Version history of doc, html and table surfaces (docs/VERSIONS.md): REST
 * routes and MCP tools (in this order in tools/list). Reading it and naming
 * or restoring versions are editor actions. Over REST a shown version's
 * token also leaves as `ETag`; over MCP it is the result's `version.etag`,
 * as in every Version.
 */
export const versionOperations = {
  list: defineOperation(
    {
      params: SurfaceParams, query: ListQuery, response: ListResponse,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces/:surfaceSlug/versions',
        summary: 'List versions of a surface',
        description:
          'Automatic versions (the points of editing sessions: a principal’s edits, at most 10 minutes per session) and named ones, newest first, ' +
          'with who edited since the previous version and counts of what changed. For a table surface these are versions of its sheet. Editor.',
        tags: ['versions'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'list_versions',
        title: 'List versions of a surface',
        description:
          `The version history of a doc, html page or table, newest first: automatic versions (one per editing session of a person or agent) and named ones, ` +
          `each with who edited and how much changed since the previous one. Page with \`before\` = \`nextCursor\`. Editors only. ${SURFACE} ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const { resolved, versioned } = await versionedSurface(services, actor, params, 'read_versions');
      return listSurfaceVersions(services, resolved.orgPlan, versioned, query);
    },
  ),
  show: defineOperation(
    {
      params: VersionParams, query: ShowQuery, response: ShowResponse,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces/:surfaceSlug/versions/:versionId',
        summary: 'Show a version',
        description:
          'The surface as it was. Doc: ProseMirror JSON in `content`, or `format=markdown|text`, or the raw body for `Accept: text/markdown|text/plain` ' +
          '(as GET /doc). Html: `html`. Table: the sheet’s `columns` and its `rows` (paged with `limit` and `after`). The `ETag` header is the version’s token (`version.etag`). Editor.',
        tags: ['versions'],
        config: { auth: 'optional' },
        // Tables and html pages answer JSON whatever Accept says.
        raw: { description: 'The surface at that version', types: { 'text/markdown': z.string(), 'text/plain': z.string() } },
      },
      mcp: {
        name: 'get_version',
        title: 'Show a version',
        description:
          'A surface as it was at version `versionId`: a doc as ProseMirror JSON, or `format: "markdown"` (best for reading) or `"text"`; an html page as `html`; ' +
          `a table as its \`columns\` and \`rows\` (\`limit\` per page, \`after\` = \`nextCursor\`). \`version.etag\` is that version's token. Editors only. ${VERSION} ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }, http) => {
      const { resolved, versioned } = await versionedSurface(services, actor, params, 'read_versions');
      const { version, content } = await showVersion(services, versioned, params.versionId);
      const surfaceId = versioned.surface.id;
      http?.header('etag', version.etag);
      if (content.kind === 'html') return { version, surfaceId, html: content.html };
      if (content.kind === 'sheet') {
        const from = query.after ? offsetOf(query.after) : 0;
        const rows = content.rows.slice(from, from + query.limit).map((row, i) => ({ ...row, workspaceId: resolved.workspace.id, surfaceId, position: from + i }));
        const next = from + rows.length < content.rows.length ? Buffer.from(String(from + rows.length)).toString('base64url') : null;
        return { version, surfaceId, columns: content.columns, rows, nextCursor: next };
      }
      const body = docFromJSONLenient(content.content);
      http?.header('vary', 'Accept');
      if (query.format === 'markdown') return { version, surfaceId, markdown: docToMarkdown(body) };
      if (query.format === 'text') return { version, surfaceId, text: docToText(body) };
      return { version, surfaceId, content: body.toJSON() };
    },
  ),
  diff: defineOperation(
    {
      params: VersionParams, query: DiffQuery, response: DiffResponse,
      rest: {
        method: 'GET',
        workspacePath: '/surfaces/:surfaceSlug/versions/:versionId/diff',
        summary: 'Compare two versions',
        description:
          'What changed from this version to `to` (another version, or `current`): doc blocks added, removed and changed (with Markdown), html lines, ' +
          'or a sheet’s columns and rows (added, removed, changed cells with before and after). Editor.',
        tags: ['versions'],
        config: { auth: 'optional' },
      },
      mcp: {
        name: 'compare_versions',
        title: 'Compare two versions',
        description:
          'What changed from version `versionId` to `to` (another version id, or `current`, the default): doc blocks added, removed or changed (with Markdown), ' +
          `html lines, or a table's columns and rows (changed cells with before and after). Editors only. ${VERSION} ${ADDRESS}`,
        annotations: READ,
      },
    },
    async (services, actor, { params, query }) => {
      const { versioned } = await versionedSurface(services, actor, params, 'read_versions');
      return diffVersions(services, versioned, params.versionId, query.to);
    },
  ),
  name: defineOperation(
    {
      params: SurfaceParams, body: NameBody, response: Version,
      rest: {
        method: 'POST',
        workspacePath: '/surfaces/:surfaceSlug/versions',
        summary: 'Name the current state',
        description: 'Keeps the surface as it is now as a named version (never removed by retention). Emits `version.created`. Editor.',
        tags: ['versions'],
      },
      mcp: {
        name: 'name_version',
        title: 'Name the current version',
        description: `Keeps a surface as it is now as a named version \`name\` (named versions are never removed by retention), for example before a large edit. Editors only. ${SURFACE} ${ADDRESS}`,
        annotations: WRITE,
      },
    },
    async (services, actor, { params, body }) => {
      const caller = requireCaller(actor);
      const { resolved, versioned } = await versionedSurface(services, caller, params, 'write_versions');
      return nameVersion(services, caller, resolved, versioned, body.name);
    },
  ),
  restore: defineOperation(
    {
      params: VersionParams, response: RestoreResponse,
      rest: {
        method: 'POST',
        workspacePath: '/surfaces/:surfaceSlug/versions/:versionId/restore',
        summary: 'Restore a version',
        description:
          'Makes the surface look as it did, as one new change by the caller on top of the current state: nothing in the history is rewritten, ' +
          'connected clients see it at once, and the usual events are emitted (plus `version.restored`). `undo` is the state just before: ' +
          'restoring it undoes the restore. Editor; 402 when a sheet would exceed the plan’s row cap.',
        tags: ['versions'],
        responses: { 402: OverLimitBody },
      },
      mcp: {
        name: 'restore_version',
        title: 'Restore a version',
        description:
          'Makes a surface look as it did at version `versionId`, as one new change by you on top of the current state: the history keeps everything, and people editing see it at once. ' +
          `It can be undone: the answer's \`undo\` is the state just before, and restore_version with \`undo.id\` brings it back. Editors only. ${VERSION} ${ADDRESS}`,
        annotations: DESTRUCTIVE,
        joinsRuns: true,
      },
    },
    async (services, actor, { params }) => {
      const caller = requireCaller(actor);
      const { resolved, versioned } = await versionedSurface(services, caller, params, 'write_versions');
      return restoreVersion(services, caller, resolved, versioned, params.versionId);
    },
  ),
};

function offsetOf(cursor: string): number {
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const offset = /^\d{1,15}$/.test(decoded) ? Number(decoded) : NaN;
  if (!Number.isSafeInteger(offset)) {
    throw errors.badRequest('Invalid cursor: pass the nextCursor of the previous page.', [{ path: ['after'], code: 'invalid_cursor', message: 'not a cursor of this version' }]);
  }
  return offset;
}
