import { z } from 'zod';
import { search } from '../domain/search';
import { requireCaller } from '../http/authenticate';
import { spendBudget } from '../http/limits';
import { defineOperation, httpExchange } from '../http/operation';
import type { App } from '../http/types';
import { MINUTE } from '../limits/rules';
import type { Services } from '../services';
import { errorResponses } from '../model/schemas/common';
import { SearchResult } from '../model/schemas/search';

const SearchQuery = z.strictObject({
  q: z
    .string()
    .max(200)
    .default('')
    .describe('Text to find, case-insensitive, anywhere in a name, cell or section (`%` and `_` match themselves). Empty: no hits.'),
  kind: z.enum(['all', 'workspace', 'row', 'doc-section']).default('all'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
});

/** 120 searches a minute per principal, over REST and MCP alike. */
const SEARCH_BUDGET = { endpoint: 'search', limit: 120, windowMs: MINUTE };

/** The route's policy (the caller's readable workspaces, inside `search`) and domain call; the MCP tool `search` runs the same. */
export const searchOperations = {
  search: defineOperation({ query: SearchQuery, response: SearchResult }, async (services, actor, { query }, http) => {
    const caller = requireCaller(actor);
    await spendBudget(services, SEARCH_BUDGET, caller.principal.id, http);
    return search(services, caller, query);
  }),
};

export async function searchRoutes(app: App, services: Services) {
  const operation = searchOperations.search;
  app.get(
    '/api/search',
    {
      schema: {
        summary: 'Search workspaces, rows and doc sections',
        description:
          'Case-insensitive substring match over workspace names, row cells (text and numbers) and doc sections (heading and text), ' +
          'in the live workspaces the caller can read: the ones `GET /api/workspaces` lists (memberships, org-visibility workspaces of ' +
          "the caller's organisations; a scoped key searches its one workspace). Best score first, ties newest first. " +
          'A row is found as soon as its write is acknowledged. 120 per minute per principal.',
        tags: ['search'],
        querystring: operation.query,
        response: { 200: operation.response, ...errorResponses },
      },
    },
    async (request, reply) => operation.run(services, request.actor, request, httpExchange(request, reply)),
  );
}
