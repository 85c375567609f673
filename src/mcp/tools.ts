import { billingOperations } from '../operations/billing';
import { commentOperations } from '../api/comments';
import { docOperations } from '../api/doc';
import { rowOperations } from '../operations/rows';
import { searchOperations } from '../api/search';
import { supportOperations } from '../operations/support';
import { versionOperations } from '../api/versions';
import { workspaceOperations } from '../api/workspaces';
import { documentContent } from '../domain/workspace-documents';
import type { Services } from '../services';
import { ADDRESS, COMMENT, DESTRUCTIVE, READ, SURFACE, VERSION, WRITE } from '../operations/tool-text';
import { toolFromOperation, toolsFromOperations, type ToolDefinition } from './registry';

/**
 * Every tool of the MCP endpoint. Each one is a REST operation under a tool
 * name; docs/MCP.md lists them with their REST twins.
 */
export function mcpTools(services: Services): ToolDefinition[] {
  const workspaces = workspaceOperations(documentContent(services));
  return [
    toolFromOperation('list_workspaces', workspaces.list, {
      title: 'List workspaces',
      description: 'Workspaces you can access (pinned first, then newest). `archived: "1"` lists archived ones instead. Same as GET /api/workspaces.',
      annotations: READ,
    }),
    toolFromOperation('get_workspace', workspaces.detail, {
      title: 'Get a workspace',
      description: `One workspace with its surfaces (tables, docs), the columns of its primary table and its member count. ${ADDRESS} Same as GET /api/workspaces/{slug}.`,
      annotations: READ,
    }),
    ...toolsFromOperations(Object.values(rowOperations)),
    toolFromOperation('get_doc', docOperations.read, {
      title: 'Read a doc',
      description: `The body of a doc surface (the first one unless \`surface\` is given): \`format: "markdown"\` for CommonMark + GFM (best for reading), \`"text"\` for plain text, omitted for ProseMirror JSON. ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('replace_doc', docOperations.replace, {
      title: 'Replace a doc',
      description: `Replaces the whole body of a doc surface with \`markdown\` (or ProseMirror JSON \`content\`); blocks that did not change are kept, so people editing them keep their work. To add text at the end, use append_doc_section. ${ADDRESS}`,
      annotations: { ...DESTRUCTIVE, idempotentHint: true },
    }),
    toolFromOperation('append_doc_section', docOperations.appendSection, {
      title: 'Append to a doc',
      description: `Appends \`markdown\` (headings, lists, tables, code) at the end of a doc surface without touching what is there. ${ADDRESS}`,
      annotations: WRITE,
    }),
    toolFromOperation('add_comment', commentOperations.create, {
      title: 'Add a comment',
      description: `Starts a comment thread on \`target\`: a row, a cell (\`rowId\` + \`columnKey\`), a doc range (\`surfaceSlug\` + \`anchor\` positions as get_doc answers them, with the text between), an html element, a surface, the workspace or a file. \`mentions\` are kept while \`@label\` occurs in \`body\`; mentioned agents are woken (\`wakes\`). To answer a thread, use reply_to_comment. ${ADDRESS}`,
      annotations: WRITE,
    }),
    toolFromOperation('list_comments', commentOperations.list, {
      title: 'List comments',
      description: `Comments of a workspace, roots and replies, oldest first (\`order: "newest"\` to flip). Filters: \`target_type\` and \`target_id\`, \`surface\`, \`status\` (\`open\` by default, \`resolved\` or \`all\`), \`mentioning: "me"\`, \`author\` (an id or \`me\`). Page with \`offset\` until \`nextOffset\` is null. ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('get_comment_thread', commentOperations.detail, {
      title: 'Get a comment thread',
      description: `One comment; a thread's root comes with its \`replies\`, oldest first (a reply's \`parentId\` names its root). ${COMMENT}`,
      annotations: READ,
    }),
    toolFromOperation('reply_to_comment', commentOperations.reply, {
      title: 'Reply to a comment',
      description: 'Answers the thread of comment `commentId` with `body` (a reply to a reply joins the root\'s thread); the reply takes the thread\'s target. Replying reopens a resolved thread.',
      annotations: WRITE,
    }),
    toolFromOperation('resolve_comment', commentOperations.resolve, {
      title: 'Resolve a comment thread',
      description: `Marks the thread of comment \`id\` (a reply's root) resolved; resolving a resolved thread changes nothing. ${COMMENT}`,
      annotations: { ...WRITE, idempotentHint: true },
    }),
    toolFromOperation('unresolve_comment', commentOperations.unresolve, {
      title: 'Reopen a comment thread',
      description: `Reopens the thread of comment \`id\`; reopening an open thread changes nothing. ${COMMENT}`,
      annotations: { ...WRITE, idempotentHint: true },
    }),
    toolFromOperation('react_to_comment', commentOperations.react, {
      title: 'React to a comment',
      description: `Adds your \`emoji\` reaction to comment \`id\` (one per emoji; adding it again changes nothing). ${COMMENT}`,
      annotations: { ...WRITE, idempotentHint: true },
    }),
    toolFromOperation('search', searchOperations.search, {
      title: 'Search',
      description:
        'Finds `q` (case-insensitive, anywhere in the text) in workspace names, row cells and doc sections of every workspace you can read, best match first. ' +
        '`kind` narrows it to `workspace`, `row` or `doc-section`; page with `limit` and `offset` (`count` is the total, or with `countEstimated` a lower bound: a broad query ranks the first 1,000 matches of each kind). Each hit names its workspace `slug` and surface, to pass to list_rows or get_doc. 120 a minute.',
      annotations: READ,
    }),
    toolFromOperation('list_versions', versionOperations.list, {
      title: 'List versions of a surface',
      description:
        `The version history of a doc, html page or table, newest first: automatic versions (one per editing session of a person or agent) and named ones, ` +
        `each with who edited and how much changed since the previous one. Page with \`before\` = \`nextCursor\`. Editors only. ${SURFACE} ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('get_version', versionOperations.show, {
      title: 'Show a version',
      description:
        'A surface as it was at version `versionId`: a doc as ProseMirror JSON, or `format: "markdown"` (best for reading) or `"text"`; an html page as `html`; ' +
        `a table as its \`columns\` and \`rows\` (\`limit\` per page, \`after\` = \`nextCursor\`). \`version.etag\` is that version's token. Editors only. ${VERSION} ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('compare_versions', versionOperations.diff, {
      title: 'Compare two versions',
      description:
        'What changed from version `versionId` to `to` (another version id, or `current`, the default): doc blocks added, removed or changed (with Markdown), ' +
        `html lines, or a table's columns and rows (changed cells with before and after). Editors only. ${VERSION} ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('name_version', versionOperations.name, {
      title: 'Name the current version',
      description: `Keeps a surface as it is now as a named version \`name\` (named versions are never removed by retention), for example before a large edit. Editors only. ${SURFACE} ${ADDRESS}`,
      annotations: WRITE,
    }),
    toolFromOperation('restore_version', versionOperations.restore, {
      title: 'Restore a version',
      description:
        'Makes a surface look as it did at version `versionId`, as one new change by you on top of the current state: the history keeps everything, and people editing see it at once. ' +
        `It can be undone: the answer's \`undo\` is the state just before, and restore_version with \`undo.id\` brings it back. Editors only. ${VERSION} ${ADDRESS}`,
      annotations: DESTRUCTIVE,
    }),
    ...toolsFromOperations(Object.values(billingOperations)),
    ...toolsFromOperations(Object.values(supportOperations)),
  ];
}
