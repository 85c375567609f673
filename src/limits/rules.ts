import type { FastifyRequest } from 'fastify';

/** One sliding-window burst limit attached to a route's config. */
export type RateLimitRule = {
  /** Names the limit in the 429 body (`endpoint`) and in the store key. */
  endpoint: string;
  limit: number;
  windowMs: number;
  /** The bucket this request falls in (an e-mail, an IP, an org); null skips the rule. */
  bucket: (request: FastifyRequest) => string | null;
};

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** `3600000` → `1h`, for the 429 body's `window`. */
export function describeWindow(ms: number): string {
  if (ms % HOUR === 0) return `${ms / HOUR}h`;
  if (ms % MINUTE === 0) return `${ms / MINUTE}m`;
  return `${Math.round(ms / 1000)}s`;
}
