import { billingOperations } from '../api/billing';
import { docOperations } from '../api/doc';
import { commentOperations } from '../operations/comments';
import { rowOperations } from '../operations/rows';
import { searchOperations } from '../api/search';
import { supportOperations } from '../api/support';
import { versionOperations } from '../api/versions';
import { workspaceOperations } from '../api/workspaces';
import { assertDowngradable } from '../domain/billing';
import { resolveCallerOrg } from '../domain/members';
import { documentContent } from '../domain/workspace-documents';
import { PLANS } from '../limits/plans';
import type { PlanName } from '../persistence/schema';
import type { Services } from '../services';
import { ADDRESS, COMMENT, DESTRUCTIVE, ORG, PAYMENTS, READ, SURFACE, VERSION, WRITE } from '../operations/tool-text';
import { toolFromOperation, toolsFromOperations, type ToolContext, type ToolDefinition } from './registry';

const price = (plan: PlanName) => `$${(PLANS[plan].monthlyPriceCents / 100).toFixed(2)} a month`;

/**
 * The confirmation messages of the plan tools. The caller's right to change
 * the plan is checked first, so a caller who may not is refused at once
 * rather than after confirming; the operation checks it again when it runs.
 */
const billedOrg = ({ services, actor }: ToolContext, args: Record<string, unknown>) => resolveCallerOrg(services, actor, args.org as string | undefined, 'manage_billing');

async function confirmUpgrade(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const org = await billedOrg(context, args);
  const plan = args.plan as PlanName;
  return (
    `Move ${org.name} (${org.slug}) from the ${org.plan} plan to ${plan} (${price(plan)})? ` +
    'With a card on file it switches at once and the rest of this period is charged, prorated; without one the answer is a checkout link for a person to pay.'
  );
}

async function confirmDowngrade(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const org = await billedOrg(context, args);
  assertDowngradable(org);
  if (org.pendingDowngradeAt) return `Cancel the move of ${org.name} (${org.slug}) to the free plan scheduled for ${org.pendingDowngradeAt.toISOString()}? It stays on ${org.plan}.`;
  return `Move ${org.name} (${org.slug}) from the ${org.plan} plan to free at the end of the billing period? The ${org.plan} caps stay until then; afterwards new writes over the free caps are refused (nothing is deleted).`;
}

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
    ...toolsFromOperations(Object.values(commentOperations)),
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
    toolFromOperation('get_billing', billingOperations.summary, {
      title: 'Get the plan and usage',
      description: `The organisation's plan, price and every cap next to live usage (agents, members, workspaces, rows, API calls this month, storage, messages), the billing period, any scheduled downgrade and every plan's caps. Any member. ${ORG}`,
      annotations: READ,
    }),
    toolFromOperation('upgrade_plan', billingOperations.upgrade, {
      title: 'Upgrade the plan',
      description:
        'Moves the organisation to `plan` (`pro` or `scale`). With a card on file it switches at once (`switched`, with the prorated charge) and the new caps apply to the next write; ' +
        `without one it answers \`checkout-required\` with a \`checkoutUrl\` a person must open to pay. Owners only (OAuth tokens need the \`admin\` scope). 5 an hour per organisation. ${ORG}`,
      annotations: PAYMENTS,
      confirm: confirmUpgrade,
      capExempt: true,
    }),
    toolFromOperation('downgrade_plan', billingOperations.downgrade, {
      title: 'Downgrade to free',
      description:
        'Schedules the move to the free plan for the end of the billing period (`scheduled`, `effectiveAt`); called while one is scheduled, it cancels it (`canceled`). ' +
        `The paid caps stay until then, and nothing is deleted. Owners only (OAuth tokens need the \`admin\` scope). 5 an hour per organisation. ${ORG}`,
      annotations: PAYMENTS,
      confirm: confirmDowngrade,
      capExempt: true,
    }),
    toolFromOperation('request_limit_increase', billingOperations.requestLimitIncrease, {
      title: 'Ask for a higher limit',
      description: `Asks the operator for a cap beyond the plan (\`kind\`: agents, workspaces, rows or other; \`desiredValue\`; \`reason\`). It is recorded and changes nothing by itself; there is no reply through this tool. Any member. ${ORG}`,
      annotations: WRITE,
      capExempt: true,
    }),
    toolFromOperation('create_support_ticket', supportOperations.create, {
      title: 'Open a support ticket',
      description: `Files a ticket with Trellis support (\`kind\`, \`title\`, \`body\`; \`context\` for ids and state that help reproduce it) and mirrors it into the tracker (\`trackerUrl\`). 10 an hour per organisation. ${ORG}`,
      annotations: { ...WRITE, openWorldHint: true },
    }),
  ];
}
