import { errorResponses } from '../model/schemas/common';
import type { Operation, RestRequest } from '../operations/operation';
import { workspacePaths } from '../operations/workspace-routes';
import type { Services } from '../services';
import { httpExchange } from './exchange';
import type { App } from './types';

/**
 * Registers every operation that has REST facts as a Fastify route: its
 * schemas validate the request and describe it in OpenAPI (200 is the
 * operation's response; the common error responses and the route's own
 * extra statuses are added), its config feeds the platform hooks (auth,
 * limits, metering), and the handler is the operation's `run`.
 */
export function mountOperations(app: App, services: Services, operations: Iterable<Operation>) {
  for (const operation of operations) {
    const rest = operation.rest;
    if (!rest) continue;
    const urls = rest.workspacePath !== undefined ? workspacePaths(rest.workspacePath) : [rest.path!];
    const querystring = rest.querystring ?? operation.query;
    const body = rest.body ?? operation.body;
    // One object per URL: the onRoute hook that drops `orgSlug` on the bare path edits the schema in place.
    const schema = () => ({
      summary: rest.summary,
      ...(rest.description !== undefined ? { description: rest.description } : {}),
      tags: rest.tags,
      ...(operation.params ? { params: operation.params } : {}),
      ...(querystring ? { querystring } : {}),
      ...(body ? { body } : {}),
      response: { 200: operation.response, ...errorResponses, ...rest.responses },
    });
    for (const url of urls) {
      app.route({
        method: rest.method,
        url,
        schema: schema(),
        ...(rest.config ? { config: rest.config } : {}),
        handler: async (request, reply) => {
          const validated: RestRequest = { params: request.params, query: request.query, body: request.body };
          return operation.run(services, request.actor, (rest.input ? rest.input(validated) : validated) as never, httpExchange(request, reply));
        },
      });
    }
  }
}
