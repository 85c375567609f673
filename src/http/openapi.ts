import swagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Services } from '../domain/services';
import type { App } from './types';

export const API_VERSION = '1.0.1';

/**
 * The OpenAPI 3.1 description is generated from the same zod schemas that
 * validate requests, so it cannot drift from what the server enforces.
 */
export async function registerOpenApi(app: App, services: Services) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Trellis API',
        version: API_VERSION,
        description:
          'Realtime workspaces shared by people and agents: tables, docs, html pages and files. ' +
          'Errors use `{ error: { code, message, details? }, requestId }` (429 and 402 keep their documented bodies). ' +
          'Every response carries `X-RateLimit-Monthly-Cap`, `-Used` and `-Reset` (ISO 8601); writes accept an `Idempotency-Key` header ' +
          '(replays carry `Idempotent-Replayed: true`); docs/LIMITS.md lists every limit. ' +
          'See docs/ in the repository for decisions the specification left open.',
      },
      servers: [{ url: services.config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'API key (`svc_live_...`) or OAuth access token (`oat_...`).' },
          session: { type: 'apiKey', in: 'cookie', name: 'svc-session' },
        },
      },
      security: [{ apiKey: [] }, { session: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => markDeepObjectParameters(markOptionalBodies(jsonSchemaTransformObject(document) as OpenApiDocument)),
  });

  app.get('/openapi.json', { schema: { summary: 'This OpenAPI 3.1 description', tags: ['platform'] }, config: { auth: 'none', metered: false } }, async () => app.swagger());
}

type JsonSchema = { anyOf?: JsonSchema[]; type?: unknown };
type Parameter = { in?: string; schema?: JsonSchema; style?: string; explode?: boolean };
type OpenApiDocument = {
  paths?: Record<string, Record<string, { requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> }; parameters?: Parameter[] }>>;
};

/**
 * An object in a query string is written with brackets (`filter[status][in]=a,b`,
 * nested by the app's query-string parser): OpenAPI's `deepObject` style, so
 * generated clients and fuzzers write it the way the route reads it.
 */
function markDeepObjectParameters<T extends OpenApiDocument>(document: T): T {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' && parameter.schema?.type === 'object') Object.assign(parameter, { style: 'deepObject', explode: true });
      }
    }
  }
  return document;
}

/**
 * @fastify/swagger marks every request body `required`. A route whose body
 * schema is `.nullish()` (no body, or an empty one, is fine) is documented as
 * an optional body of the object type instead of a required `object | null`.
 */
function markOptionalBodies<T extends OpenApiDocument>(document: T): T {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const json = operation.requestBody?.content?.['application/json'];
      const branches = json?.schema?.anyOf;
      if (!json || !branches?.some((branch) => branch.type === 'null')) continue;
      const rest = branches.filter((branch) => branch.type !== 'null');
      json.schema = rest.length === 1 ? rest[0] : { anyOf: rest };
      operation.requestBody!.required = false;
    }
  }
  return document;
}
