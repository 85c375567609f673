import type { PlanName } from '../persistence/schema';

/**
 * Every plan cap in one table. Cap checks anywhere in the code read this;
 * nothing else hard-codes a number.
 */
export type PlanCaps = {
  monthlyPriceCents: number;
  agents: number;
  humans: number;
  workspaces: number;
  rowsPerWorkspace: number;
  apiCallsPerMonth: number;
  webhookDeliveriesPerMonth: number;
  messagesBundlePerMonth: number;
  messagesHardCeilingPerMonth: number;
  storageBytes: number;
  /** How long automatic versions are kept (null: for ever); named versions are always kept. */
  versionRetentionDays: number | null;
};

const GB = 1024 ** 3;

export const PLANS = {
  free: {
    monthlyPriceCents: 0,
    agents: 3,
    humans: 6,
    workspaces: 20,
    rowsPerWorkspace: 500,
    apiCallsPerMonth: 10_000,
    webhookDeliveriesPerMonth: 1_000,
    messagesBundlePerMonth: 1_000,
    messagesHardCeilingPerMonth: 1_000,
    storageBytes: 5 * GB,
    versionRetentionDays: 30,
  },
  pro: {
    monthlyPriceCents: 1_900,
    agents: 10,
    humans: 20,
    workspaces: 200,
    rowsPerWorkspace: 5_000,
    apiCallsPerMonth: 100_000,
    webhookDeliveriesPerMonth: 10_000,
    messagesBundlePerMonth: 25_000,
    messagesHardCeilingPerMonth: 500_000,
    storageBytes: 100 * GB,
    versionRetentionDays: 365,
  },
  scale: {
    monthlyPriceCents: 4_900,
    agents: 30,
    humans: 60,
    workspaces: 1_000,
    rowsPerWorkspace: 50_000,
    apiCallsPerMonth: 1_000_000,
    webhookDeliveriesPerMonth: 100_000,
    messagesBundlePerMonth: 250_000,
    messagesHardCeilingPerMonth: 5_000_000,
    storageBytes: 500 * GB,
    versionRetentionDays: null,
  },
} as const satisfies Record<PlanName, PlanCaps>;

export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function capsFor(plan: PlanName): PlanCaps {
  return PLANS[plan];
}

/** Names used in the 402 body's `limit` field. */
export type CappedResource = 'agents' | 'humans' | 'workspaces' | 'rows' | 'api_calls' | 'webhook_deliveries' | 'messages' | 'storage';
