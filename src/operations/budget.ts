import { RateLimitedError } from '../errors';
import type { Clock } from '../lib/clock';
import type { RateLimiter } from '../limits/rate-limiter';
import { describeWindow } from '../limits/rules';
import type { HttpExchange } from './operation';

/**
 * A burst budget that an operation spends itself, after its policy check
 * and before its domain call, so its REST route and its MCP tool spend one
 * budget: `billing_upgrade` needs the organisation the caller is allowed to
 * bill, which only the operation knows. Refused callers spend nothing. Over
 * REST the burst headers report the tightest budget, as for route rules.
 */
export type Budget = { endpoint: string; limit: number; windowMs: number };

/** Only the limiter and the clock of the services, so the MCP edge can spend API_WRITES with it too. */
type BudgetServices = { limits: { rateLimiter: RateLimiter }; clock: Clock };

export async function spendBudget(services: BudgetServices, budget: Budget, bucket: string, http?: HttpExchange): Promise<void> {
  const decision = await services.limits.rateLimiter.consume(`${budget.endpoint}:${bucket}`, budget.limit, budget.windowMs);
  const now = services.clock.now();
  http?.burstSpent?.(decision, now);
  if (!decision.allowed) throw new RateLimitedError(budget.endpoint, budget.limit, describeWindow(budget.windowMs), decision.resetAt, now);
}
