import { z } from 'zod';
import { search } from '../domain/search';
import { requireCaller } from '../access/callers';
import { MINUTE } from '../limits/rules';
import { IsoDateTime } from '../model/schemas/common';
import { SearchResult } from '../model/schemas/search';
import { spendBudget } from '../limits/budget';
import { defineOperation } from './operation';
import { READ } from './tool-text';

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

/** The route's policy (the caller's readable workspaces, inside `search`) and domain call; also the MCP tool `search`. */
export const searchOperations = {
  search: defineOperation(
    {
      query: SearchQuery, response: SearchResult,
      rest: {
        method: 'GET',
        path: '/api/search',
        summary: 'Search workspaces, rows and doc sections',
        description:
          'Case-insensitive substring match over workspace names, row cells (text and numbers) and doc sections (heading and text), ' +
          'in the live workspaces the caller can read: the ones `GET /api/workspaces` lists (memberships, org-visibility workspaces of ' +
          "the caller's organisations; a scoped key searches its one workspace). Best score first, ties newest first. " +
          'A row is found as soon as its write is acknowledged. 120 per minute per principal.',
        tags: ['search'],
      },
      mcp: {
        name: 'search',
        title: 'Search',
        description:
          'Finds `q` (case-insensitive, anywhere in the text) in workspace names, row cells and doc sections of every workspace you can read, best match first. ' +
          '`kind` narrows it to `workspace`, `row` or `doc-section`; page with `limit` and `offset` (`count` is the total, or with `countEstimated` a lower bound: a broad query ranks the first 1,000 matches of each kind). Each hit names its workspace `slug` and surface, to pass to list_rows or get_doc. 120 a minute.',
        annotations: READ,
      },
    },
    async (services, actor, { query }, http) => {
      const caller = requireCaller(actor);
      await spendBudget(services, SEARCH_BUDGET, caller.principal.id, http);
      return search(services, caller, query);
    },
  ),
};
