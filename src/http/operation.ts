import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Actor } from '../policy/actor';
import type { RateLimitDecision } from '../limits/rate-limiter';
import type { Services } from '../services';
import { reportBurst } from './limits';

/**
 * One API operation, shared by its REST route and its MCP tool so the two
 * cannot drift: the zod schemas (params, query, body, response) and `run`,
 * which does the policy check and the one domain call. The route passes
 * the validated request; the MCP tool passes its validated arguments split
 * back into the same three parts (src/mcp/registry.ts).
 */
export type OperationSchemas = {
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodObject;
  response: z.ZodType;
};

/** Parts without a schema are whatever the request carries, which an operation must not read. */
type Parsed<S> = S extends z.ZodType ? z.output<S> : unknown;

export type OperationInput<S extends OperationSchemas> = {
  params: Parsed<S['params']>;
  query: Parsed<S['query']>;
  body: Parsed<S['body']>;
};

export type Operation<S extends OperationSchemas = OperationSchemas> = S & {
  /** `actor` is null only on routes open to anonymous readers; operations that write require one. */
  run(services: Services, actor: Actor | null, input: OperationInput<S>, http?: HttpExchange): Promise<z.input<S['response']>>;
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
};

export function httpExchange(request: FastifyRequest, reply: FastifyReply): HttpExchange {
  const ifMatch = request.headers['if-match'];
  return {
    ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
    header: (name, value) => reply.header(name, value),
    burstSpent: (decision, now) => reportBurst(reply, decision, now),
  };
}

export function defineOperation<S extends OperationSchemas>(schemas: S, run: Operation<S>['run']): Operation<S> {
  return { ...schemas, run };
}
