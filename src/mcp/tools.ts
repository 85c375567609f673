import { billingOperations } from '../api/billing';
import { commentOperations } from '../operations/comments';
import { docOperations } from '../operations/doc';
import { rowOperations } from '../operations/rows';
import { searchOperations } from '../operations/search';
import { supportOperations } from '../api/support';
import { versionOperations } from '../operations/versions';
import { workspaceOperations } from '../operations/workspaces';
import { assertDowngradable } from '../domain/billing';
import { resolveCallerOrg } from '../domain/members';
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
  return [
    ...toolsFromOperations(Object.values(workspaceOperations)),
    ...toolsFromOperations(Object.values(rowOperations)),
    ...toolsFromOperations(Object.values(docOperations)),
    ...toolsFromOperations(Object.values(commentOperations)),
    ...toolsFromOperations(Object.values(searchOperations)),
    ...toolsFromOperations(Object.values(versionOperations)),
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
