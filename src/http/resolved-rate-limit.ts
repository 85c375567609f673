import type { FastifyRequest } from 'fastify';
import type { RateLimitRule } from '../limits/rules';

/**
 * A burst limit whose bucket needs the database. Rule `bucket` functions
 * are synchronous and the limits hook runs before the handler, yet "20 per
 * hour per workspace" needs the workspace id (a bare slug such as `welcome`
 * exists in every organisation), and a caller who may not act at all must
 * not spend the target's budget. So a route-level `onRequest` hook, which
 * runs after authentication and before the limits hook, authorizes the
 * caller and remembers the bucket the rule then reads.
 *
 * Routes that share one `endpoint` name share one budget per bucket.
 */
export function resolvedRateLimit(limit: Omit<RateLimitRule, 'bucket'>, resolveBucket: (request: FastifyRequest) => Promise<string>) {
  const buckets = new WeakMap<FastifyRequest, string>();
  const rule: RateLimitRule = { ...limit, bucket: (request) => buckets.get(request) ?? null };
  const onRequest = async (request: FastifyRequest) => {
    buckets.set(request, await resolveBucket(request));
  };
  return { rule, onRequest };
}
