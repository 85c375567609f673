/**
 * When a failed delivery is tried again: the Standard Webhooks schedule
 * (as Svix runs it). Attempt 1 is immediate; after it fails, waits of 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over about 27.6 hours,
 * then the delivery is `failed` and only a manual retry sends it again.
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The wait after `attemptsMade` failed attempts, or null when there are no more. */
export function retryDelayAfter(attemptsMade: number): number | null {
  return attemptsMade >= 1 && attemptsMade <= RETRY_DELAYS_MS.length ? RETRY_DELAYS_MS[attemptsMade - 1]! : null;
}

/** One attempt, from connecting to the end of the response. */
export const ATTEMPT_TIMEOUT_MS = 10 * SECOND;

/** A subscription whose attempts have failed this long, with no success between, is deactivated. */
export const DEACTIVATE_AFTER_FAILING_MS = 3 * 24 * HOUR;
