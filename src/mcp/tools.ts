import { docOperations } from '../api/doc';
import { rowOperations } from '../api/rows';
import { workspaceOperations } from '../api/workspaces';
import { documentContent } from '../domain/workspace-documents';
import type { Services } from '../services';
import { toolFromOperation, type ToolDefinition } from './registry';

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, openWorldHint: false } as const;

const ADDRESS = 'Address the workspace by `slug` (or its id); add `orgSlug` when the slug exists in several of your organisations.';

/**
 * Every tool of the MCP endpoint. Each one is a REST operation under a tool
 * name; docs/MCP.md lists them with their REST twins, and the tools still
 * to come (comments, billing, support, search) with the one line each needs.
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
  ];
}
