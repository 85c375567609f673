import { z } from 'zod';
import { ROLES } from '../permissions';

/** Schemas shared by several resources. Resource-specific ones live beside their routes. */

export const Role = z.enum(ROLES);
export const Visibility = z.enum(['private', 'org', 'unlisted', 'public']);
export const Slug = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be kebab-case: lowercase letters and digits separated by single hyphens');
export const Email = z.email().max(254);
export const IsoDateTime = z.iso.datetime({ offset: true });

export const Principal = z
  .object({
    principalType: z.enum(['user', 'agent']),
    id: z.string(),
    name: z.string(),
    avatarUrl: z.string().nullable(),
  })
  .meta({ id: 'Principal' });
export type Principal = z.infer<typeof Principal>;

/**
 * Who a change is attributed to: a principal, or a public form (its id is
 * the form view's, its name the form's title), the author of the rows
 * people send through it without an account.
 */
export const Author = z
  .object({
    principalType: z.enum(['user', 'agent', 'form']).describe('`form`: a public form of the workspace, whose id is the form view’s'),
    id: z.string(),
    name: z.string(),
    avatarUrl: z.string().nullable(),
  })
  .meta({ id: 'Author' });
export type Author = z.infer<typeof Author>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
    requestId: z.string(),
  })
  .meta({ id: 'Error' });

export const RateLimitedBody = z
  .object({
    code: z.literal('rate_limited'),
    endpoint: z.string(),
    limit: z.number().int(),
    window: z.string(),
    resetAt: IsoDateTime,
    message: z.string(),
    requestId: z.string(),
  })
  .meta({ id: 'RateLimited' });

export const OverLimitBody = z
  .object({
    code: z.literal('over_limit'),
    limit: z.string(),
    current: z.number().int(),
    cap: z.number().int(),
    message: z.string(),
    upgrade_url: z.string(),
    details: z.object({ upgrade: z.record(z.string(), z.unknown()), increase: z.record(z.string(), z.unknown()) }),
    requestId: z.string(),
  })
  .meta({ id: 'OverLimit' });

export const Ok = z.object({ ok: z.literal(true) });

/** A version token a read returned (`ETag`), named by a write as what it was based on (docs/VERSIONS.md). */
export const BaseVersion = z.string().min(1).max(100).describe('The `ETag` a read returned (also accepted as the `If-Match` header): merge against that version');

/** 412: `precondition_failed` (not a version token of this surface) or `base_unavailable` (too old to merge against). */
export const PreconditionFailed = ErrorBody;
/** `?org=<slug>` on routes about an organisation that carry no slug in the path (billing, support). */
export const OrgQuery = z.strictObject({
  org: z.string().min(1).max(100).optional().describe("Organisation slug; default: the caller's own organisation"),
});

/** The `org` query parameter as sent, for hooks that run before validation (rate-limit buckets). */
export function orgQueryOf(request: { query: unknown }): string | undefined {
  const org = (request.query as { org?: unknown } | undefined)?.org;
  return typeof org === 'string' ? org : undefined;
}

/** Documented error responses, spread into a route's `response` map. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: ErrorBody,
  429: RateLimitedBody,
  500: ErrorBody,
};

export const toIso = (date: Date | string | null | undefined): string | null =>
  date == null ? null : (date instanceof Date ? date : new Date(date)).toISOString();

/**
 * Free text of at most `max` UTF-16 units that is valid Unicode: a lone
 * surrogate would be stored as U+FFFD, silently changing what was sent, so
 * it is refused (422) instead.
 */
export const WellFormedString = (max: number) => z.string().max(max).refine((s) => !/\p{Cs}/u.test(s), 'must not contain unpaired surrogates');

/** A yes/no query parameter: `1` or `true` turns it on (`archived=1`, `force=1`). */
export const QueryFlag = z.enum(['1', '0', 'true', 'false']);
export const flagOn = (value: string | undefined): boolean => value === '1' || value === 'true';
