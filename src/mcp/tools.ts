import { commentOperations } from '../api/comments';
import { docOperations } from '../api/doc';
import { rowOperations } from '../api/rows';
import { workspaceOperations } from '../api/workspaces';
import { documentContent } from '../domain/workspace-documents';
import type { Services } from '../services';
import { toolFromOperation, type ToolDefinition } from './registry';

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, openWorldHint: false } as const;

const COMMENT = 'Address the comment by `id`; `slug` (and `orgSlug`) are optional and, when given, the comment must be in that workspace.';
const ADDRESS = 'Address the workspace by `slug` (or its id); add `orgSlug` when the slug exists in several of your organisations.';

/**
 * Every tool of the MCP endpoint. Each one is a REST operation under a tool
 * name; docs/MCP.md lists them with their REST twins, and the tools still
 * to come (billing, support, search) with the one line each needs.
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
    toolFromOperation('list_rows', rowOperations.list, {
      title: 'List rows',
      description: `Rows of one table surface (\`surface\` slug or \`surfaceId\`) or of all of them, 100 per page by default; pass \`nextCursor\` back as \`after\` for the next page. \`sort\` names a column key (\`-key\` for descending). ${ADDRESS}`,
      annotations: READ,
    }),
    toolFromOperation('create_row', rowOperations.create, {
      title: 'Create a row',
      description: `Appends a row to a table surface (the primary one unless \`surface\` is given). \`data\` maps column keys to values, checked against the column types; unknown keys create text columns. ${ADDRESS}`,
      annotations: WRITE,
    }),
    toolFromOperation('update_row', rowOperations.update, {
      title: 'Update a row',
      description: `Merges \`data\` into row \`id\` (keys you leave out are kept). Naming another table \`surface\` moves the row there (to its end, or to \`position\`). ${ADDRESS}`,
      annotations: { ...WRITE, idempotentHint: true },
    }),
    toolFromOperation('bulk_update_rows', rowOperations.bulkUpdate, {
      title: 'Update many rows',
      description: `Merges data into up to 500 rows at once, all or nothing: an unknown id or an invalid value changes none of them. ${ADDRESS}`,
      annotations: { ...WRITE, idempotentHint: true },
    }),
    toolFromOperation('delete_row', rowOperations.remove, {
      title: 'Delete a row',
      description: `Deletes row \`id\` for good. ${ADDRESS}`,
      annotations: DESTRUCTIVE,
    }),
    toolFromOperation('move_rows', rowOperations.move, {
      title: 'Move rows to another table',
      description: `Moves up to 500 rows (in the order given) to the end of the table surface \`surface\`, in one transaction; rows already there are skipped and counted. ${ADDRESS}`,
      annotations: WRITE,
    }),
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
  ];
}
