// Not an operation: the MCP protocol endpoint (JSON-RPC 2.0 over Streamable HTTP) that serves the operations' tools.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { bearerTokenOf } from '../http/authenticate';
import { toApiError } from '../http/error-handler';
import type { App } from '../http/types';
import { handleMcpRequest, MCP_ERRORS } from '../mcp/server';
import { mcpTools } from '../mcp/tools';
import { RateLimitedError } from '../errors';
import type { Services } from '../domain/services';

// JSON-RPC 2.0 §4: an id is a string, a number without a fractional part, or null. Only safe integers
// round-trip through JSON, so 1e400 (Infinity), 1.5 or 2^64 is an invalid request, not a 500 later.
const JsonRpcId = z.union([z.string(), z.int()]).nullable();
const JsonRpcMessage = z.looseObject({ jsonrpc: z.literal('2.0'), id: JsonRpcId.optional(), method: z.string().max(200).optional() });
const JsonRpcBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)]).describe('A JSON-RPC 2.0 message (tools/list, tools/call, initialize, ...) or a batch');
const JsonRpcErrorBody = z
  .object({ jsonrpc: z.literal('2.0'), id: JsonRpcId, error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }) })
  .meta({ id: 'JsonRpcError' });
const JsonRpcResponse = z.looseObject({ jsonrpc: z.literal('2.0'), id: JsonRpcId }).describe('The JSON-RPC response: `result`, or `error`');

/**
 * `POST /api/mcp`: the MCP endpoint (Streamable HTTP, stateless; docs/MCP.md).
 * Callers present an API key or an OAuth access token; without one the
 * answer is 401 with `WWW-Authenticate` pointing at the protected-resource
 * metadata, which is how MCP clients discover the OAuth flow.
 */
export async function mcpRoutes(app: App, services: Services) {
  for (const tool of mcpTools()) app.mcpTools.register(tool);

  app.post(
    '/api/mcp',
    {
      schema: {
        summary: 'MCP endpoint (JSON-RPC 2.0 over Streamable HTTP)',
        description:
          'Stateless Streamable HTTP: send `Accept: application/json, text/event-stream`; every answer is one JSON body. `tools/list` names the tools, `tools/call` runs one; ' +
          'each tool is a REST operation with the same schemas and permissions (docs/MCP.md). Tool calls count against the monthly API cap. ' +
          'Errors: -32001 (HTTP 401) missing or invalid token; -32015 plan cap; -32029 write burst limit; -32601 unknown method or tool; -32602 invalid arguments; -32603 internal. ' +
          'What the API refuses (403, 404, 409, 422...) is a result with `isError: true` carrying the REST error body.',
        tags: ['mcp'],
        body: JsonRpcBody,
        response: { 200: JsonRpcResponse, 202: z.null().describe('Notifications only: accepted'), 400: JsonRpcErrorBody, 401: JsonRpcErrorBody, 429: JsonRpcErrorBody, 500: JsonRpcErrorBody },
      },
      config: { auth: 'optional', metered: false, writeLimited: false },
      errorHandler: (error, request, reply) => answerError(services, error, request, reply),
    },
    async (request, reply) => {
      const actor = request.actor;
      if (!actor || actor.via === 'session') return unauthorized(services, request, reply, 'Send Authorization: Bearer with an API key or an OAuth access token.');
      const response = await handleMcpRequest(services, app.mcpTools, {
        actor,
        ip: request.ip,
        log: request.log,
        request: new Request(`${services.config.publicUrl}/api/mcp`, { method: 'POST', headers: forwardedHeaders(request) }),
        body: request.body,
      });
      // The SDK answered with a complete JSON body (or 202 and none); it is passed on as it is.
      const raw = reply as unknown as FastifyReply;
      raw.code(response.status);
      response.headers.forEach((value, name) => {
        if (name !== 'content-length') raw.header(name, value);
      });
      const text = await response.text();
      return text ? raw.type('application/json; charset=utf-8').send(text) : raw.send();
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/api/mcp',
      schema: {
        summary: method === 'GET' ? 'No server-initiated stream (stateless endpoint)' : 'No session to end (stateless endpoint)',
        description: 'Answers 405: this endpoint keeps no sessions and pushes nothing; POST each JSON-RPC message.',
        tags: ['mcp'],
        response: { 405: JsonRpcErrorBody },
      },
      config: { auth: 'none', metered: false },
      handler: async (_request, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send({ jsonrpc: '2.0' as const, id: null, error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages to it.' } }),
    });
  }
}

/** The headers the SDK transport reads (Accept, Content-Type, MCP-Protocol-Version...), without framing headers of the original body. */
function forwardedHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection' || name === 'host') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

/**
 * -32001 with HTTP 401 and the challenge MCP clients follow into OAuth
 * (RFC 9728 §5.1): where the protected-resource metadata is, and the scopes
 * a client should ask for by default.
 */
function unauthorized(services: Services, request: FastifyRequest, reply: FastifyReply, message: string) {
  const presented = bearerTokenOf(request).token !== null || bearerTokenOf(request).invalid;
  const challenge = [
    `resource_metadata="${services.config.publicUrl}/.well-known/oauth-protected-resource"`,
    'scope="read write"',
    ...(presented ? ['error="invalid_token"', 'error_description="The token is invalid, expired or revoked"'] : []),
  ].join(', ');
  return reply
    .code(401)
    .header('www-authenticate', `Bearer ${challenge}`)
    .send({ jsonrpc: '2.0' as const, id: jsonRpcIdOf(request.body), error: { code: MCP_ERRORS.unauthorized, message } });
}

/** Errors raised before the MCP server runs (authentication, limits, a body that is not JSON-RPC), as JSON-RPC errors. */
function answerError(services: Services, error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error);
  if (apiError.statusCode === 401) return unauthorized(services, request, reply, apiError.message);
  if (apiError.headers) reply.headers(apiError.headers);
  let code: number = MCP_ERRORS.invalidRequest;
  let data: unknown = apiError.details === undefined ? undefined : { details: apiError.details };
  if (apiError instanceof RateLimitedError) {
    code = MCP_ERRORS.rateLimited;
    data = apiError.body();
  } else if (apiError.statusCode >= 500) {
    request.log.error({ err: error }, 'mcp request failed');
    code = MCP_ERRORS.internal;
  } else if (Array.isArray(apiError.details) && apiError.details.some((detail) => detail?.code === 'invalid_json')) {
    code = MCP_ERRORS.parse;
  }
  const status = apiError.statusCode === 422 ? 400 : apiError.statusCode;
  return reply.code(status).send({ jsonrpc: '2.0' as const, id: jsonRpcIdOf(request.body), error: { code, message: apiError.message, ...(data === undefined ? {} : { data }) } });
}

/** The request's id when it is a valid one; null otherwise, as JSON-RPC answers a request whose id cannot be determined. */
function jsonRpcIdOf(body: unknown): string | number | null {
  const id = body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'id') ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : null;
}
