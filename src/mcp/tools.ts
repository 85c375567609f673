import { billingOperations } from '../operations/billing';
import { columnOperations } from '../operations/columns';
import { commentOperations } from '../operations/comments';
import { docOperations } from '../operations/doc';
import { docIoOperations } from '../operations/doc-io';
import type { Operation } from '../operations/operation';
import { presenceOperations } from '../operations/presence';
import { rowOperations } from '../operations/rows';
import { searchOperations } from '../operations/search';
import { suggestionOperations } from '../operations/suggestions';
import { supportOperations } from '../operations/support';
import { versionOperations } from '../operations/versions';
import { runOperations } from '../operations/runs';
import { viewOperations } from '../operations/views';
import { workspaceOperations } from '../operations/workspaces';
import { toolsFromOperations, type ToolDefinition } from './registry';

/** The operation tables that offer tools, in the order tools/list shows them (docs/MCP.md lists each tool with its REST twin). */
const TOOL_TABLES: ReadonlyArray<Record<string, Operation>> = [
  workspaceOperations,
  rowOperations,
  columnOperations,
  viewOperations,
  docOperations,
  docIoOperations,
  suggestionOperations,
  commentOperations,
  presenceOperations,
  searchOperations,
  versionOperations,
  runOperations,
  billingOperations,
  supportOperations,
];

/** Every tool of the MCP endpoint: each is an operation with MCP facts (src/operations). */
export function mcpTools(): ToolDefinition[] {
  return toolsFromOperations(TOOL_TABLES.flatMap((table) => Object.values(table)));
}
