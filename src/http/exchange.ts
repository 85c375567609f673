import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpExchange } from '../operations/operation';
import { reportBurst } from './limits';

export function httpExchange(request: FastifyRequest, reply: FastifyReply): HttpExchange {
  const ifMatch = request.headers['if-match'];
  return {
    ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
    header: (name, value) => reply.header(name, value),
    burstSpent: (decision, now) => reportBurst(reply, decision, now),
    client: { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') },
  };
}
