import type { FastifyReply, FastifyRequest } from 'fastify';
import { upgradeUrl } from '../domain/workspaces';
import { errors, OverLimitError, RateLimitedError } from '../errors';
import { MAX_IDEMPOTENCY_KEY_LENGTH, requestFingerprint } from '../limits/idempotency';
import type { MeterSubject, MonthlyUsage } from '../limits/monthly-meter';
import type { RateLimitDecision } from '../limits/rate-limiter';
import { describeWindow, MINUTE } from '../limits/rules';
import type { Services } from '../domain/services';
import type { Actor } from '../policy/actor';
import { resolveActor } from './authenticate';
import type { App } from './types';

/**
 * Every limit, enforced in one place for all routes (docs/LIMITS.md):
 *
 *   preValidation  failed-auth throttle → idempotent replay → monthly cap (402, writes only)
 *   preHandler     burst limits: API writes + the route's `config.rateLimits` (429)
 *   onSend         failed-auth counting, monthly headers + counting, storing the idempotent response
 *
 * Registered right after the hook that resolves `request.actor`.
 */

export const API_WRITES = { endpoint: 'api_writes', limit: 300, windowMs: MINUTE };
export const AUTH_FAILURES = { endpoint: 'auth_failures', limit: 50, windowMs: 10 * MINUTE };

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What the request-phase hooks tell the onSend hook. */
type RequestLimits = {
  /** Whom the call is metered against, worked out once. */
  subject?: MeterSubject;
  /** Read by the cap check; reused for the headers when the call is not counted. */
  usage?: MonthlyUsage;
  /** Answered from the idempotency store: not counted, not stored again. */
  replayed?: boolean;
  /** This request holds the idempotency placeholder and must complete or release it. */
  claimed?: { owner: string; key: string };
  /** Refused by a limit (402 at the cap, 429): not a call, not an idempotent result. */
  refused?: boolean;
  /** Passed schema validation. A request refused as bad input is not an idempotent result: its key stays free for the corrected retry. */
  validated?: boolean;
};

export function registerLimitHooks(app: App, services: Services) {
  const { limits, clock } = services;
  const perRequest = new WeakMap<FastifyRequest, RequestLimits>();
  const stateOf = (request: FastifyRequest) => {
    let state = perRequest.get(request);
    if (!state) perRequest.set(request, (state = {}));
    return state;
  };
  const refuse = <E extends Error>(request: FastifyRequest, error: E): E => {
    stateOf(request).refused = true;
    return error;
  };

  app.addHook('preValidation', async (request, reply) => {
    // Throttled IPs are stopped before any work, unless the request authenticated.
    if (!request.actor) {
      const failures = await limits.rateLimiter.check(`auth_failures:${request.ip}`, AUTH_FAILURES.limit, AUTH_FAILURES.windowMs);
      if (!failures.allowed) throw refuse(request, authFailuresError(failures));
    }
    if (!isKnownRoute(request)) return;
    if (await replayIdempotent(request, reply)) return reply;
    if (isMetered(request) && isCapped(request)) {
      const usage = await limits.meter.read(await meterSubject(request));
      stateOf(request).usage = usage;
      if (usage.used >= usage.cap) {
        throw refuse(request, new OverLimitError('api_calls', usage.used, usage.cap, { plan: usage.plan, upgradeUrl: upgradeUrl(services) }));
      }
    }
  });

  app.addHook('preHandler', async (request, reply) => {
    stateOf(request).validated = true;
    const checks: Array<{ endpoint: string; limit: number; windowMs: number; key: string }> = [];
    if (request.actor && WRITE_METHODS.has(request.method) && request.routeOptions.config?.writeLimited !== false) {
      checks.push({ ...API_WRITES, limit: services.config.apiWritesPerMinute, key: `api_writes:${writerBucket(request.actor)}` });
    }
    for (const rule of request.routeOptions.config?.rateLimits ?? []) {
      const bucket = rule.bucket(request);
      if (bucket !== null) checks.push({ endpoint: rule.endpoint, limit: rule.limit, windowMs: rule.windowMs, key: `${rule.endpoint}:${bucket}` });
    }
    let tightest: RateLimitDecision | undefined;
    for (const check of checks) {
      const decision = await limits.rateLimiter.consume(check.key, check.limit, check.windowMs);
      if (!tightest || decision.remaining < tightest.remaining) tightest = decision;
      if (!decision.allowed) {
        setBurstHeaders(reply, decision, clock.now());
        throw refuse(request, new RateLimitedError(check.endpoint, check.limit, describeWindow(check.windowMs), decision.resetAt, clock.now()));
      }
    }
    if (tightest) setBurstHeaders(reply, tightest, clock.now());
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const state = stateOf(request);
    let body = payload;
    if (reply.statusCode === 401 || reply.statusCode === 403) body = await countFailedAuth(request, reply, body);
    await setMonthlyHeaders(request, reply, state);
    if (state.claimed) await storeIdempotentResponse(request, reply, state, state.claimed, body);
    return body;
  });

  app.addHook('onClose', async () => limits.close());

  async function replayIdempotent(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const key = request.headers['idempotency-key'];
    // Anonymous callers have no principal to scope the key to; their header is ignored (docs/LIMITS.md).
    if (typeof key !== 'string' || !request.actor || !WRITE_METHODS.has(request.method)) return false;
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw errors.badRequest(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
    }
    const owner = request.actor.principal.id;
    const claim = await limits.idempotency.claim(owner, key, requestFingerprint(request.method, request.url, request.body));
    switch (claim.kind) {
      case 'claimed':
        stateOf(request).claimed = { owner, key };
        return false;
      case 'mismatch':
        throw errors.conflict('This Idempotency-Key was already used for a different request; use a new key.');
      case 'in_flight':
        throw errors.conflict('A request with this Idempotency-Key is still in progress; retry once it has finished.');
      case 'replay':
        stateOf(request).replayed = true;
        reply.code(claim.statusCode).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(claim.body);
        return true;
    }
  }

  /** Counts a 401/403 against the IP; past the threshold an unauthenticated caller gets 429 instead. */
  async function countFailedAuth(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const failures = await limits.rateLimiter.consume(`auth_failures:${request.ip}`, AUTH_FAILURES.limit, AUTH_FAILURES.windowMs);
    // A 401 raised while resolving credentials never reaches preValidation, so the throttle answers here.
    if (failures.allowed || request.actor) return payload;
    const error = refuse(request, authFailuresError(failures));
    reply.code(error.statusCode).headers(error.headers ?? {});
    return JSON.stringify({ ...error.body(), requestId: request.id });
  }

  /** Every response carries the monthly headers; only real calls are counted. */
  async function setMonthlyHeaders(request: FastifyRequest, reply: FastifyReply, state: RequestLimits) {
    try {
      const subject = await meterSubject(request);
      const counted = isMetered(request) && !state.replayed && !state.refused && isCountedStatus(reply.statusCode);
      const usage = counted ? await limits.meter.count(subject) : (state.usage ?? (await limits.meter.read(subject)));
      reply.header('x-ratelimit-monthly-cap', String(usage.cap));
      reply.header('x-ratelimit-monthly-used', String(usage.used));
      reply.header('x-ratelimit-monthly-reset', usage.resetAt.toISOString());
    } catch (error) {
      // A counter outage must not turn every answer (health included) into a 500.
      request.log.warn({ err: error }, 'monthly usage unavailable; headers omitted');
    }
  }

  /**
   * The caller's organisation, or the client IP for anonymous callers. Routes
   * with `auth: 'none'` (health) and unknown routes skip authentication, so
   * credentials sent there are resolved here: an agent polling health sees its
   * organisation's numbers, not its IP's.
   */
  async function meterSubject(request: FastifyRequest): Promise<MeterSubject> {
    const state = stateOf(request);
    if (state.subject) return state.subject;
    let actor = request.actor;
    const authSkipped = !isKnownRoute(request) || request.routeOptions.config?.auth === 'none';
    if (!actor && authSkipped && (request.headers.authorization || request.headers.cookie)) {
      actor = (await resolveActor(services, request)).actor;
    }
    state.subject = actor?.orgId ? { orgId: actor.orgId } : { ip: request.ip };
    return state.subject;
  }

  async function storeIdempotentResponse(
    request: FastifyRequest,
    reply: FastifyReply,
    state: RequestLimits,
    claimed: { owner: string; key: string },
    payload: unknown,
  ) {
    const status = reply.statusCode;
    const isJson = String(reply.getHeader('content-type') ?? '').startsWith('application/json');
    // Only final answers are replayed: a 5xx, a cap or a burst limit may succeed on retry, and input
    // refused by validation never ran (as with Stripe, the fixed request may reuse the key).
    const replayable =
      state.validated === true && status < 500 && status !== 402 && status !== 429 && !state.refused && typeof payload === 'string' && isJson;
    try {
      if (replayable) await limits.idempotency.complete(claimed.owner, claimed.key, status, payload);
      else await limits.idempotency.release(claimed.owner, claimed.key);
    } catch (error) {
      request.log.warn({ err: error }, 'could not store the idempotent response');
    }
  }

  function authFailuresError(decision: RateLimitDecision) {
    return new RateLimitedError(AUTH_FAILURES.endpoint, AUTH_FAILURES.limit, describeWindow(AUTH_FAILURES.windowMs), decision.resetAt, clock.now());
  }
}

function isKnownRoute(request: FastifyRequest): boolean {
  return request.routeOptions.url !== undefined;
}

/** Metered: a known route not marked `metered: false`; CORS preflights are the browser's, not the caller's. */
function isMetered(request: FastifyRequest): boolean {
  return isKnownRoute(request) && request.method !== 'OPTIONS' && request.routeOptions.config?.metered !== false;
}

/** SPEC: caps gate writes only. At the monthly cap reads keep answering (and are counted), and so do the exempt writes. */
function isCapped(request: FastifyRequest): boolean {
  return WRITE_METHODS.has(request.method) && request.routeOptions.config?.capExempt !== true;
}

/**
 * 401/403 count toward the failed-auth throttle instead; a 5xx is our failure, not a call;
 * a 429 is a limit refusing the call, whether the hook or an operation's own budget (`spendBudget`) raised it.
 */
function isCountedStatus(status: number): boolean {
  return status !== 401 && status !== 403 && status !== 429 && status < 500;
}

/** One budget per key, per browser session, or per principal (OAuth tokens: their user). */
export function writerBucket(actor: Actor): string {
  if (actor.key) return `key:${actor.key.id}`;
  if (actor.sessionId) return `session:${actor.sessionId}`;
  return `${actor.principal.principalType}:${actor.principal.id}`;
}

/** Moved to src/limits/budget.ts (operations spend budgets); re-exported for the edges that import it from here. */
export { spendBudget, type Budget } from '../limits/budget';

/** The burst headers of a budget spent by the handler, unless the limits hook already reported a tighter one. */
export function reportBurst(reply: FastifyReply, decision: RateLimitDecision, now: Date) {
  const reported = Number(reply.getHeader('x-ratelimit-burst-remaining') ?? Infinity);
  if (decision.remaining < reported) setBurstHeaders(reply, decision, now);
}

function setBurstHeaders(reply: FastifyReply, decision: RateLimitDecision, now: Date) {
  const secondsToReset = Math.max(0, Math.ceil((decision.resetAt.getTime() - now.getTime()) / 1000));
  reply.header('x-ratelimit-burst-remaining', String(decision.remaining));
  reply.header('x-ratelimit-burst-reset', String(secondsToReset));
}
