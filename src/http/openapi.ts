import swagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Services } from '../services';
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
    transformObject: jsonSchemaTransformObject,
  });

  app.get('/openapi.json', { schema: { summary: 'This OpenAPI 3.1 description', tags: ['platform'] }, config: { auth: 'none', metered: false } }, async () => app.swagger());
}
