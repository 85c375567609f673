import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunScope } from '../lib/run-scope';

/**
 * The `Trellis-Run` header (docs/RUNS.md): a request names the run its
 * writes join with it, and every answer of a write that joined a run (the
 * automatic run of a key included) carries its id, so an agent learns the
 * run it is in.
 */
export const RUN_HEADER = 'trellis-run';

const scopes = new WeakMap<FastifyRequest, RunScope>();

export function openRunScope(request: FastifyRequest): RunScope {
  const named = request.headers[RUN_HEADER];
  const scope: RunScope = { requested: typeof named === 'string' && named.trim() !== '' ? named.trim() : null, joined: null };
  scopes.set(request, scope);
  return scope;
}

export function answerRunScope(request: FastifyRequest, reply: FastifyReply) {
  const joined = scopes.get(request)?.joined;
  if (joined && reply.statusCode < 400) reply.header(RUN_HEADER, joined.id);
}
