import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Actor } from '../policy/actor';
import { upgradeUrl } from '../domain/workspaces';
import { ApiError, OverLimitError, RateLimitedError } from '../errors';
import { API_WRITES, spendBudget, writerBucket } from '../http/limits';
import { API_VERSION } from '../http/openapi';
import type { MeterSubject } from '../limits/monthly-meter';
import type { Services } from '../domain/services';
import { confirm, requestConfirmation } from './confirmations';
import { CONFIRM_TOKEN_FIELD, type ToolDefinition, type ToolRegistry } from './registry';

/**
 * One MCP request (Streamable HTTP, stateless): a fresh SDK server and
 * transport answer it and are dropped. Tool calls are metered like REST
 * calls and their failures follow docs/MCP.md: protocol problems are
 * JSON-RPC errors, what the API refuses is an `isError` result carrying the
 * REST error body.
 */

export const MCP_ERRORS = {
  unauthorized: -32001,
  planCap: -32015,
  rateLimited: -32029,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  parse: -32700,
} as const;

/** Thrown inside request handlers: the SDK answers `{ code, message, data }` as given. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const INSTRUCTIONS =
  'Trellis holds workspaces of tables (rows with typed columns) and rich-text docs, shared by people and agents. ' +
  'Start with list_workspaces, then get_workspace for its surfaces and columns. Tools take the workspace `slug`; ' +
  'rows are read with list_rows and written with create_row, update_row and bulk_update_rows; docs are read with get_doc (format "markdown") ' +
  'and written with append_doc_section or replace_doc. search finds text across every workspace you can read; list_versions and ' +
  'restore_version bring back an earlier state of a doc or table. Every change is attributed to you and visible to others at once.';

export type McpCall = {
  actor: Actor;
  ip: string;
  log: FastifyBaseLogger;
  request: Request;
  body: unknown;
};

/** The SDK (~30 MB resident with its schemas) is loaded by the first MCP request, not at start. */
let sdkModules: Promise<{ Server: typeof import('@modelcontextprotocol/sdk/server/index.js').Server; Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport; types: typeof import('@modelcontextprotocol/sdk/types.js') }> | null = null;
function loadSdk() {
  sdkModules ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ Server: server.Server, Transport: transport.WebStandardStreamableHTTPServerTransport, types }));
  return sdkModules;
}

export async function handleMcpRequest(services: Services, registry: ToolRegistry, call: McpCall): Promise<Response> {
  const { Server, Transport, types } = await loadSdk();
  const { CallToolRequestSchema, ListToolsRequestSchema } = types;
  const server = new Server({ name: 'trellis', title: 'Trellis', version: API_VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: registry.descriptors() }));
  const unparsed = argumentsTheSdkWouldAlter(call.body);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(services, registry, call, request.params.name, unparsed.get(extra.requestId) ?? request.params.arguments),
  );
  server.onerror = (error) => call.log.debug({ err: error }, 'mcp transport error');
  const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(call.request, { parsedBody: call.body });
  } finally {
    await server.close();
  }
}

/**
 * The SDK's parsing of a tools/call silently drops a top-level `__proto__`
 * argument, which REST refuses as an unknown field. Such calls are checked
 * on the arguments as sent, so the tool's strict schema refuses them too (-32602).
 */
function argumentsTheSdkWouldAlter(body: unknown): Map<string | number, unknown> {
  const altered = new Map<string | number, unknown>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const { id, method, params } = (message ?? {}) as { id?: unknown; method?: unknown; params?: { arguments?: unknown } };
    const args = params?.arguments;
    if (method === 'tools/call' && (typeof id === 'string' || typeof id === 'number') && args && typeof args === 'object' && Object.hasOwn(args, '__proto__')) {
      altered.set(id, args);
    }
  }
  return altered;
}

async function callTool(services: Services, registry: ToolRegistry, call: McpCall, name: string, rawArgs: unknown): Promise<CallToolResult> {
  const tool = registry.get(name);
  if (!tool) throw new JsonRpcError(MCP_ERRORS.methodNotFound, `Unknown tool "${name}"; tools/list names the tools.`);
  const meter = meterFor(services, call);
  // Caps gate writes only (SPEC): read tools and the billing tools answer at the cap, and are counted.
  if (!tool.annotations.readOnlyHint && !tool.capExempt) {
    const usage = await services.limits.meter.read(meter.subject);
    if (usage.used >= usage.cap) {
      throw planCapError(new OverLimitError('api_calls', usage.used, usage.cap, { plan: usage.plan, upgradeUrl: upgradeUrl(services) }));
    }
  }

  const parsed = registry.inputOf(tool).safeParse(rawArgs ?? {});
  if (!parsed.success) {
    await meter.count();
    throw invalidParams(name, parsed.error);
  }
  try {
    if (!tool.annotations.readOnlyHint) await takeWriteSlot(services, call.actor);
    const { [CONFIRM_TOKEN_FIELD]: confirmToken, ...args } = parsed.data as Record<string, unknown>;
    const result = tool.confirm ? await runConfirmed(services, call.actor, tool, args, confirmToken as string | undefined) : await runTool(services, call.actor, tool, args);
    await meter.count();
    return result;
  } catch (error) {
    if (error instanceof OverLimitError) {
      await meter.count();
      throw planCapError(error);
    }
    if (error instanceof RateLimitedError) throw rateLimitedError(error);
    if (error instanceof z.ZodError) {
      await meter.count();
      throw invalidParams(name, error);
    }
    if (error instanceof ApiError && error.statusCode < 500) {
      // Refused calls are not counted, as on REST.
      if (error.statusCode !== 401 && error.statusCode !== 403) await meter.count();
      return apiErrorResult(error);
    }
    call.log.error({ err: error, tool: name }, 'mcp tool failed');
    throw new JsonRpcError(MCP_ERRORS.internal, 'Internal error.');
  }
}

async function runTool(services: Services, actor: Actor, tool: ToolDefinition, args: Record<string, unknown>): Promise<CallToolResult> {
  const output = await tool.run({ services, actor }, args);
  // Shaped by the response schema exactly as the REST route's serializer shapes it.
  return success(z.encode(tool.output, output as never) as Record<string, unknown>);
}

async function runConfirmed(
  services: Services,
  actor: Actor,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  token: string | undefined,
): Promise<CallToolResult> {
  if (token === undefined) {
    const message = await tool.confirm!(args, { services, actor });
    const pending = await requestConfirmation(services, actor, tool.name, args);
    return success({ status: 'confirmation_required', confirm_token: pending.token, message, expires_in: pending.expiresIn });
  }
  if (!(await confirm(services, actor, tool.name, args, token))) {
    return apiErrorResult(
      new ApiError(
        409,
        'invalid_confirmation',
        'This confirm_token is unknown, used, expired, or was issued for other arguments or another caller. Call again without it to get a new one.',
      ),
    );
  }
  return runTool(services, actor, tool, args);
}

function success(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** What the REST route would have answered, as the tool's result: the documented error body and its HTTP status. */
function apiErrorResult(error: ApiError): CallToolResult {
  const body = { ...error.body(), status: error.statusCode };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

function invalidParams(tool: string, error: z.ZodError): JsonRpcError {
  const details = error.issues.map((issue) => ({ path: issue.path.map(String), code: issue.code, message: issue.message }));
  const summary = details.map((d) => `${d.path.join('.') || '(arguments)'}: ${d.message}`).join('; ');
  return new JsonRpcError(MCP_ERRORS.invalidParams, `Invalid arguments for ${tool}: ${summary}`, { details });
}

/** -32015 mirrors the 402 body: SPEC names `plan`, `active`, `cap`, `upgrade`, `increase`. */
export function planCapError(error: OverLimitError): JsonRpcError {
  const body = error.body();
  return new JsonRpcError(MCP_ERRORS.planCap, error.message, {
    plan: error.hints.plan,
    limit: error.limit,
    active: error.current,
    cap: error.cap,
    upgrade: body.details.upgrade,
    increase: body.details.increase,
    upgrade_url: body.upgrade_url,
  });
}

function rateLimitedError(error: RateLimitedError): JsonRpcError {
  return new JsonRpcError(MCP_ERRORS.rateLimited, error.message, { ...error.body(), retryAfter: Number(error.headers?.['retry-after'] ?? 1) });
}

/** Writes share the REST budget of 300 per minute per key or session; reads over MCP are not burst-limited, as on REST. */
function takeWriteSlot(services: Services, actor: Actor) {
  return spendBudget(services, { ...API_WRITES, limit: services.config.apiWritesPerMinute }, writerBucket(actor));
}

/** Tool calls count against the monthly API cap of the caller's organisation, exactly like REST calls. */
function meterFor(services: Services, call: McpCall): { subject: MeterSubject; count(): Promise<void> } {
  const subject: MeterSubject = call.actor.orgId ? { orgId: call.actor.orgId } : { ip: call.ip };
  return {
    subject,
    count: async () => {
      try {
        await services.limits.meter.count(subject);
      } catch (error) {
        call.log.warn({ err: error }, 'monthly usage unavailable; tool call not counted');
      }
    },
  };
}
