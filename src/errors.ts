/**
 * Every error a client can see. Routes and the domain throw these; the HTTP
 * error handler turns them into the documented body, so no route formats
 * an error by hand.
 */

export type ErrorDetail = { path: string[]; code: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The documented `{ error: { code, message, details? } }` body, without `requestId`. */
  body(): Record<string, unknown> {
    return {
      error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
    };
  }
}

/** Errors whose body is not the standard envelope (the spec fixes their shape). */
export class RateLimitedError extends ApiError {
  constructor(
    readonly endpoint: string,
    readonly limit: number,
    readonly window: string,
    readonly resetAt: Date,
    now: Date = new Date(),
    /** For a limit that is not a window (imports at once): what is limited, before "Retry in N s." */
    what?: string,
  ) {
    const retryAfter = Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
    super(429, 'rate_limited', `${what ?? `Too many requests to ${endpoint}: at most ${limit} per ${window}.`} Retry in ${retryAfter} s.`, undefined, {
      'retry-after': String(retryAfter),
    });
  }
  override body() {
    return {
      code: 'rate_limited',
      endpoint: this.endpoint,
      limit: this.limit,
      window: this.window,
      resetAt: this.resetAt.toISOString(),
      message: this.message,
    };
  }
}

export type OverLimitHints = { plan: string; upgradeUrl: string };

export class OverLimitError extends ApiError {
  constructor(
    readonly limit: string,
    readonly current: number,
    readonly cap: number,
    readonly hints: OverLimitHints,
    message = `The ${hints.plan} plan allows ${cap} ${limit.replace(/_/g, ' ')}; this organisation is at ${current}.`,
  ) {
    super(402, 'over_limit', message);
  }
  override body() {
    return {
      code: 'over_limit',
      limit: this.limit,
      current: this.current,
      cap: this.cap,
      message: this.message,
      upgrade_url: this.hints.upgradeUrl,
      details: {
        upgrade: {
          message: 'Upgrade the plan to raise this cap at once.',
          mcpTool: 'upgrade_plan',
          api: 'POST /api/billing/upgrade',
          plan: this.hints.plan === 'free' ? 'pro' : 'scale',
        },
        increase: { mcpTool: 'request_limit_increase', api: 'POST /api/billing/request-limit-increase' },
      },
    };
  }
}

/**
 * A document change the database would not commit. The sync engine has
 * logged it once, with the document and request ids; no client saw it.
 * Postgres data exceptions (SQLSTATE class 22) mean the input was the cause.
 */
export class DocumentWriteError extends ApiError {
  readonly logged = true;
  constructor(
    readonly documentName: string,
    inputCaused: boolean,
  ) {
    super(
      inputCaused ? 422 : 500,
      inputCaused ? 'validation' : 'internal',
      inputCaused ? 'The change holds a value the database cannot store; nothing was written.' : 'Internal server error.',
    );
    this.name = 'DocumentWriteError';
  }
}

/**
 * A document whose load would take more heap than the configured budget
 * (`DOCUMENT_LOAD_BUDGET_MB`): refused, so it cannot take the process down
 * with it. Sync clients get it as the reason of a refused connection.
 */
export class DocumentTooLargeError extends ApiError {
  /** Hocuspocus sends this to a sync client whose connection it refuses. */
  readonly reason: string;
  constructor(
    readonly documentName: string,
    readonly stored: { snapshotBytes: number; tailUpdates: number; tailBytes: number },
    readonly estimatedBytes: number,
    readonly budgetBytes: number,
  ) {
    const mb = (n: number) => Math.ceil(n / 2 ** 20);
    super(
      503,
      'document_too_large',
      `This document is too large to open: loading it would take about ${mb(estimatedBytes)} MB of memory, over the server's budget of ${mb(budgetBytes)} MB. ` +
        'An operator can compact it with `npm run admin -- compact-document`.',
    );
    this.name = 'DocumentTooLargeError';
    this.reason = `document-too-large: ${this.message}`;
  }
}

export const errors = {
  badRequest: (message: string, details?: ErrorDetail[]) => new ApiError(400, 'bad_request', message, details),
  /** A body that does not parse: still 400 `bad_request` with `details[]`, naming the whole body (path `[]`). */
  invalidJson: (reason = 'Unexpected end of input') =>
    new ApiError(400, 'bad_request', 'The request body is not valid JSON.', [{ path: [], code: 'invalid_json', message: reason }]),
  validation: (message: string, details?: ErrorDetail[]) => new ApiError(422, 'validation', message, details),
  unauthorized: (message = 'Authentication required: send a session cookie or an Authorization: Bearer key.') =>
    new ApiError(401, 'unauthorized', message),
  elevationRequired: (scope: string) =>
    new ApiError(401, 'elevation_required', `This action needs a recent elevation for scope "${scope}": call POST /api/me/elevate.`, {
      requiredScope: scope,
    }),
  forbidden: (message = 'You do not have permission to do this.') => new ApiError(403, 'forbidden', message),
  notFound: (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found.`),
  conflict: (message: string, details?: unknown) => new ApiError(409, 'conflict', message, details),
  ambiguousSlug: (slug: string, canonicalPaths: string[]) =>
    new ApiError(400, 'ambiguous_slug', `The slug "${slug}" names workspaces in several organisations; use an org-prefixed path.`, {
      hint: canonicalPaths,
    }),
  payloadTooLarge: (message: string) => new ApiError(413, 'payload_too_large', message),
  storageQuota: (current: number, cap: number) =>
    new ApiError(413, 'storage_quota', 'This upload would exceed the organisation storage quota.', { current, cap }),
  internal: () => new ApiError(500, 'internal', 'Internal server error.'),
};

/**
 * Zod issue codes that mean the request has the wrong shape (400) rather
 * than a well-shaped value breaking a constraint (422), per API-DECISIONS.
 */
export const SHAPE_ISSUES = new Set(['invalid_type', 'invalid_value', 'unrecognized_keys', 'invalid_union', 'invalid_key', 'invalid_element']);

/** A zod issue as far as error details read it. */
export type SchemaIssue = { code: string; path: PropertyKey[]; message: string; keys?: string[]; expected?: string; errors?: SchemaIssue[][] };

/**
 * A union none of whose options took the value, as the issues of the option
 * that got furthest: the one option whose issues all lie inside the value
 * (it has the value's shape; a part of it is wrong), so a detail names that
 * part (`filter.and.0.value`) instead of zod's "Invalid input" at the union.
 * When no option or several get that far, the union's own issue stays,
 * saying which types it takes when every option wanted another type.
 */
export function withUnionsResolved(issue: SchemaIssue): SchemaIssue[] {
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return [issue];
  const options = issue.errors.map((option) => option.flatMap(withUnionsResolved));
  const inside = options.filter((option) => option.length > 0 && option.every((inner) => inner.path.length > 0));
  if (inside.length === 1) return inside[0]!.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  const expected = options.every((option) => option.length === 1 && option[0]!.code === 'invalid_type' && option[0]!.path.length === 0 && option[0]!.expected)
    ? options.map((option) => option[0]!.expected!)
    : [];
  const message = expected.length > 1 ? `Invalid input: expected ${expected.slice(0, -1).join(', ')} or ${expected.at(-1)}` : issue.message;
  return [{ code: issue.code, path: issue.path, message }];
}

/** Zod issues of a value checked inside a handler (e.g. JSON text in a field), as the same 400/422 a schema would give; `prefix` locates the value. */
export function zodIssuesError(issues: SchemaIssue[], prefix: string[] = []): ApiError {
  const details: ErrorDetail[] = issues.flatMap(withUnionsResolved).flatMap((issue) => {
    const path = [...prefix, ...issue.path.map(String)];
    if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
      return issue.keys.map((key) => ({ path: [...path, key], code: issue.code, message: `Unknown field "${key}"` }));
    }
    return [{ path, code: issue.code, message: issue.message }];
  });
  const summary = details.map((d) => `${d.path.join('.') || '(root)'}: ${d.message}`).join('; ');
  return details.some((detail) => SHAPE_ISSUES.has(detail.code)) ? errors.badRequest(`Malformed request. ${summary}`, details) : errors.validation(`Invalid value. ${summary}`, details);
}
