import type { z } from 'zod';
import type { RateLimitDecision } from '../limits/rate-limiter';
import type { RateLimitRule } from '../limits/rules';
import type { Actor } from '../policy/actor';
import type { Services } from '../domain/services';

/**
 * One API operation, described once: its zod schemas (params, query, body,
 * response), `run` (the policy check and the one domain call), its REST
 * facts and, when agents may call it, its MCP facts. The REST edge mounts
 * it from this (src/http/mount-operations.ts: route, validation, OpenAPI),
 * and the MCP edge turns it into a tool (src/mcp/registry.ts), so the two
 * cannot drift. Adding an endpoint is one entry in one operations module.
 */
export type OperationSchemas = {
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodObject;
  response: z.ZodType;
  /**
   * The answer when the operation only records a request to be decided
   * later (a write sent as a suggestion): 202 over REST with this body, one
   * more shape of the tool's result over MCP. `run` returns it wrapped in
   * `Accepted`.
   */
  accepted?: z.ZodType;
  rest?: RestFacts;
  mcp?: McpFacts;
};

/** Parts without a schema are whatever the request carries, which an operation must not read. */
type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

export type OperationInput<S extends OperationSchemas> = {
  params: Parsed<S['params']>;
  query: Parsed<S['query']>;
  body: Parsed<S['body']>;
};

/** A 202 answer (see `OperationSchemas.accepted`). */
export class Accepted<T> {
  constructor(readonly body: T) {}
}

type AcceptedAnswer<S extends OperationSchemas> = S['accepted'] extends z.ZodType ? Accepted<z.input<S['accepted']>> : never;

export type Operation<S extends OperationSchemas = OperationSchemas> = S & {
  /** `actor` is null only on routes open to anonymous readers; operations that write require one. */
  run(services: Services, actor: Actor | null, input: OperationInput<S>, http?: HttpExchange): Promise<z.input<S['response']> | AcceptedAnswer<S>>;
};

/**
 * The HTTP side of a REST call, for the few operations that use headers:
 * a write's base version may come as `If-Match`, a version token leaves as
 * `ETag`, a budget the operation spends leaves as the burst headers. MCP
 * calls have none (their base is the body's `baseVersion`, the version
 * token is in the result).
 */
export type HttpExchange = {
  ifMatch?: string;
  header(name: string, value: string): unknown;
  burstSpent?(decision: RateLimitDecision, now: Date): void;
  /** Who sent the request, for an operation that records its visitor (a referral click). */
  client?: { ip: string; userAgent: string };
};

/** A request as the REST edge hands it over: the validated parts. */
export type RestRequest = { params: unknown; query: unknown; body: unknown };

/** How an operation is served over REST. */
export type RestFacts = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * A path under a workspace (`/rows/:id`, or '' for the workspace itself):
   * served at both `/api/workspaces/:slug…` and
   * `/api/orgs/:orgSlug/workspaces/:slug…` (workspace-routes.ts).
   */
  workspacePath?: string;
  /** Any other route: its full path. */
  path?: string;
  /**
   * Served at several URLs whose path parameters differ (a comment at
   * `/api/comments/:id` and under its workspace): each URL with its own
   * params schema, in place of `path`/`workspacePath`. The operation's own
   * `params` is then what MCP callers send.
   */
  urls?: Array<{ url: string; params: z.ZodObject }>;
  /**
   * A burst limit whose bucket needs the database (a workspace or an org
   * id, after checking the caller may act at all): see
   * src/http/resolved-rate-limit.ts. Operations naming the same `endpoint`
   * share one budget per bucket.
   */
  resolvedLimit?: { limit: Omit<RateLimitRule, 'bucket'>; bucket: (services: Services, actor: Actor | null, params: unknown) => Promise<string> };
  /** Marked deprecated in OpenAPI (the operation sets its own `Deprecation` header). */
  deprecated?: boolean;
  summary: string;
  description?: string;
  tags: string[];
  /** The body schema when it is not an object: an empty or absent body (`z.strictObject({}).nullish()`). The operation reads no body then. */
  body?: z.ZodType;
  /** The query schema when it differs from the operation's: a route that also takes the body's sheet selector in the query (see `input`). */
  querystring?: z.ZodObject;
  /** Statuses beyond 200 and the common error responses (402 at a cap, 412 on a stale base, ...). */
  responses?: Record<number, z.ZodType>;
  /** Route options the platform hooks read (src/http/types.ts): who may call, burst limits, metering. */
  config?: RestConfig;
  /** Answers 201 Created (with the response schema) instead of 200. */
  created?: boolean;
  /** Maps the validated request onto the operation's input when the two differ (a selector accepted in the query or the body). */
  input?: (request: RestRequest) => RestRequest;
  /**
   * A doc body the 200 may also send raw (GET /doc, a version): without
   * `format` in the query, `Accept: text/markdown` or `text/plain` runs the
   * operation with `format` set to `markdown` or `text` and sends that
   * string of its result with the type. Its OpenAPI description and the
   * schema of each raw type.
   */
  raw?: { description: string; types: Record<'text/markdown' | 'text/plain', z.ZodType> };
  /** A streamed form of the 200 (rows as CSV): see StreamedForm. */
  stream?: StreamedForm;
  /** The 200 as a file in another format (a doc as Word or PDF): see FileForms. */
  files?: FileForms;
};

/**
 * A 200 that may instead be a file, streamed as an attachment: with
 * `format=<one of types>` in the query, `run` answers in place of the
 * operation. Not offered over MCP (a tool answers JSON).
 */
export type FileForms = {
  /** Each format and its content type. */
  types: Record<string, string>;
  description: string;
  run(services: Services, actor: Actor | null, request: RestRequest, format: string): Promise<FileBody>;
};

export type FileBody = { filename: string; contentType: string; stream: NodeJS.ReadableStream };

/**
 * A 200 that may instead be streamed in another media type, for answers
 * too large to build in memory (a table as CSV): `format=<format>` in the
 * query, or no `format` and an Accept header that prefers `type` to JSON,
 * runs `run` in place of the operation and streams its chunks with `type`
 * (as an attachment when it names a file). `workspacePath`: a second URL
 * under the workspace, with the same params and query, that always answers
 * in this form (`/rows.csv`). Not offered over MCP: a tool answers JSON.
 */
export type StreamedForm = {
  type: 'text/csv';
  format: string;
  description: string;
  workspacePath?: string;
  /** The query schema at `workspacePath`, when it takes less than the route's (no paging there). */
  querystring?: z.ZodObject;
  /** The request as validated by the route (its params and query schemas). */
  run(services: Services, actor: Actor | null, request: RestRequest): Promise<StreamedBody>;
};

export type StreamedBody = { chunks: AsyncIterable<string>; filename?: string };

export type RestConfig = {
  auth?: 'required' | 'optional' | 'none';
  rateLimits?: RateLimitRule[];
  metered?: boolean;
  capExempt?: boolean;
  /** False for a read sent as POST (a query too long for a URL): not a write for the burst limit. */
  writeLimited?: boolean;
};

export type ToolAnnotations = { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

/** What a tool's confirmation and run see: the services and the caller. */
export type ToolContext = { services: Services; actor: Actor };

/** How an operation is offered as an MCP tool. */
export type McpFacts = {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /**
   * Dangerous tools (plan changes) answer `confirmation_required` first and
   * act only when called again with its `confirm_token` (src/mcp/confirmations.ts).
   * Returns the message shown to the caller; it may check the caller's
   * permission first (a thrown API error is the answer), so a caller who
   * could not act is refused at once instead of after confirming.
   */
  confirm?: (args: Record<string, unknown>, context: ToolContext) => string | Promise<string>;
  /** A write the monthly API-call cap never refuses (billing: the way out of the cap), as its REST route (`config.capExempt`). Still counted. */
  capExempt?: boolean;
  /** A write of content a run records (rows, columns, docs, comments): the tool takes a `run` argument (docs/RUNS.md). */
  joinsRuns?: boolean;
};

export function defineOperation<S extends OperationSchemas>(schemas: S, run: Operation<S>['run']): Operation<S> {
  return { ...schemas, run };
}
