import { RateLimitedError } from '../errors';
import type { Clock } from '../lib/clock';
import type { RateLimitDecision, RateLimiter } from './rate-limiter';
import { describeWindow } from './rules';

/**
 * A burst budget that an operation spends itself, after its policy check
 * and before its domain call, so its REST route and its MCP tool spend one
 * budget: `billing_upgrade` needs the organisation the caller is allowed to
 * bill, which only the operation knows. Refused callers spend nothing. Over
 * REST the burst headers report the tightest budget, as for route rules.
 * Here rather than in src/http so operations (which may not import the
 * HTTP edge) can spend one; the parameters are the few parts it reads.
 */
export type Budget = { endpoint: string; limit: number; windowMs: number };

export async function spendBudget(
  services: { limits: { rateLimiter: RateLimiter }; clock: Clock },
  budget: Budget,
  bucket: string,
  http?: { burstSpent?(decision: RateLimitDecision, now: Date): void },
): Promise<void> {
  const decision = await services.limits.rateLimiter.consume(`${budget.endpoint}:${bucket}`, budget.limit, budget.windowMs);
  const now = services.clock.now();
  http?.burstSpent?.(decision, now);
  if (!decision.allowed) throw new RateLimitedError(budget.endpoint, budget.limit, describeWindow(budget.windowMs), decision.resetAt, now);
}
