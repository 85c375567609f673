import { z } from 'zod';
import type { Actor } from '../policy/actor';
import { Accepted, type McpFacts, type Operation, type ToolAnnotations, type ToolContext } from '../operations/operation';
import type { Services } from '../domain/services';
import type { RunScope } from '../lib/run-scope';

/**
 * MCP tools. A tool is a name, a description, an input and an output
 * schema and a `run`; most are an API operation (src/operations/operation.ts)
 * under a tool name, so the tool's input schema is the route's params,
 * query and body schemas side by side, its output schema the route's
 * response schema, and `run` the route's own policy check and domain call.
 */

export type { ToolAnnotations, ToolContext } from '../operations/operation';

export type ToolDefinition = McpFacts & {
  input: z.ZodObject;
  output: z.ZodType;
  run(context: ToolContext, args: Record<string, unknown>): Promise<unknown>;
};

export type ToolMeta = Omit<McpFacts, 'name'>;

/** The tools of operations that carry MCP facts, in their order. */
export function toolsFromOperations(operations: Iterable<Operation>): ToolDefinition[] {
  return [...operations].flatMap((operation) => (operation.mcp ? [toolFromOperation(operation.mcp.name, operation, operation.mcp)] : []));
}

/** A tool that runs an API operation: its arguments are the route's params, query and body fields in one object. */
export function toolFromOperation(name: string, operation: Operation, meta: ToolMeta | McpFacts): ToolDefinition {
  const parts = (['params', 'query', 'body'] as const).flatMap((part) => (operation[part] ? [[part, operation[part]] as const] : []));
  const shape: Record<string, z.ZodType> = {};
  for (const [part, schema] of parts) {
    for (const [field, fieldSchema] of Object.entries(schema.shape)) {
      if (field in shape) throw new Error(`Tool ${name}: the ${part} field "${field}" is also in another part of the route`);
      shape[field] = fieldSchema as z.ZodType;
    }
  }
  const { name: _name, joinsRuns: _joins, ...facts } = meta as McpFacts;
  // Write tools take the run their changes join, as REST takes the Trellis-Run header (docs/RUNS.md).
  const joinsRuns = meta.joinsRuns === true;
  if (joinsRuns && RUN_ARGUMENT in shape) throw new Error(`Tool ${name}: its route has a field "${RUN_ARGUMENT}", which write tools take for the run`);
  if (joinsRuns) shape[RUN_ARGUMENT] = RunArgument;
  return {
    ...facts,
    name,
    input: z.strictObject(shape),
    output: operation.accepted ? z.union([operation.response, operation.accepted]) : operation.response,
    run: async (context, args) => {
      // Each part is parsed again by its own schema, so any rule the route's schema holds at object level holds here too.
      const input = Object.fromEntries(parts.map(([part, schema]) => [part, schema.parse(pick(args, Object.keys(schema.shape)))]));
      const call = async (actor: Actor) => {
        const result = await operation.run(context.services, actor, input as never);
        return result instanceof Accepted ? result.body : result;
      };
      return joinsRuns ? inRunOfCall(context.actor, args[RUN_ARGUMENT] as string | undefined, call) : call(context.actor);
    },
  };
}

const RUN_ARGUMENT = 'run';

const RunArgument = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .describe('The run this change joins (start_run gives one; docs/RUNS.md); omitted: the Trellis-Run header, else your automatic run in this workspace');

/**
 * One tool call's run: the `run` argument, else the request's `Trellis-Run`
 * header. The call gets its own copy of the actor with its own scope; what
 * it joins is handed to the request's scope, so the answer carries
 * `Trellis-Run` as a REST write's does.
 */
async function inRunOfCall<T>(actor: Actor, named: string | undefined, call: (actor: Actor) => Promise<T>): Promise<T> {
  const request = actor.request;
  const scope: RunScope = { requested: named ?? request?.run.requested ?? null, joined: null };
  try {
    return await call({ ...actor, request: { id: request?.id, run: scope } });
  } finally {
    if (request && scope.joined) request.run.joined = scope.joined;
  }
}

function pick(args: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => args[key] !== undefined).map((key) => [key, args[key]]));
}

export const CONFIRM_TOKEN_FIELD = 'confirm_token';

export const ConfirmationRequired = z
  .object({
    status: z.literal('confirmation_required'),
    confirm_token: z.string().describe('Call the tool again with the same arguments and this token'),
    message: z.string(),
    expires_in: z.number().int().describe('Seconds the token stays valid'),
  })
  .describe('Dangerous tools answer this first; nothing has happened yet');

/** What tools/list shows for a tool: JSON Schema 2020-12 without the `$schema` key, `type: object` at the root (MCP requires it). */
export type ToolDescriptor = {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema: { type: 'object'; [key: string]: unknown };
  annotations: ToolAnnotations & { title: string };
};

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private descriptorCache: ToolDescriptor[] | null = null;

  constructor(tools: ToolDefinition[] = []) {
    tools.forEach((tool) => this.register(tool));
  }

  register(tool: ToolDefinition) {
    if (this.tools.has(tool.name)) throw new Error(`MCP tool ${tool.name} is registered twice`);
    this.tools.set(tool.name, tool);
    this.descriptorCache = null;
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  /** The input schema a call is validated against: a dangerous tool also takes its `confirm_token`. */
  inputOf(tool: ToolDefinition): z.ZodObject {
    return tool.confirm ? tool.input.extend({ [CONFIRM_TOKEN_FIELD]: z.string().min(1).max(200).optional().describe('From a previous confirmation_required answer') }) : tool.input;
  }

  descriptors(): ToolDescriptor[] {
    this.descriptorCache ??= [...this.tools.values()].map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.confirm
        ? `${tool.description} Dangerous: the first call answers confirmation_required with a confirm_token; call again with the same arguments and the token within 60 seconds.`
        : tool.description,
      inputSchema: objectSchema(this.inputOf(tool), 'input'),
      outputSchema: objectSchema(tool.confirm ? z.union([tool.output, ConfirmationRequired]) : tool.output, 'output'),
      annotations: { title: tool.title, ...tool.annotations },
    }));
    return this.descriptorCache;
  }
}

function objectSchema(schema: z.ZodType, io: 'input' | 'output'): { type: 'object'; [key: string]: unknown } {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  // A union of objects is still an object; MCP clients read `type` at the root.
  return { ...json, type: 'object' };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The MCP endpoint's tools; tests may register more before the server listens. (Declared here: the REST edge does not know MCP.) */
    mcpTools: ToolRegistry;
  }
}
