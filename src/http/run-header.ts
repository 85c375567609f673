import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../policy/actor';
import type { RunScope } from '../lib/run-scope';

/**
 * The `Trellis-Run` header (docs/RUNS.md): a request names the run its
 * writes join with it, and every answer of a write that joined a run (the
 * automatic run of a key included) carries its id, so an agent learns the
 * run it is in.
 */
export const RUN_HEADER = 'trellis-run';

/** The request's own copy of its caller, carrying the request id and the run scope its writes decide (src/lib/run-scope.ts). */
export function actorOfRequest(request: FastifyRequest, actor: Actor): Actor {
  const named = request.headers[RUN_HEADER];
  const run: RunScope = { requested: typeof named === 'string' && named.trim() !== '' ? named.trim() : null, joined: null };
  return { ...actor, request: { id: request.id, run } };
}

export function answerRunScope(request: FastifyRequest, reply: FastifyReply) {
  const joined = request.actor?.request?.run.joined;
  if (joined && reply.statusCode < 400) reply.header(RUN_HEADER, joined.id);
}
