import { z } from 'zod';
import { IsoDateTime } from './common';

/** Search answers (docs/SEARCH.md), as the API describes them and the web app's search dialog reads them. */

export const SEARCH_KINDS = ['workspace', 'row', 'doc-section'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

export const SearchHit = z
  .object({
    id: z.string().describe('Kind-prefixed: `workspace:<id>`, `row:<rowId>`, `doc-section:<surfaceId>:<index>`'),
    kind: z.enum(SEARCH_KINDS),
    title: z.string().describe("The workspace name, the row's `title` cell (else its first text cell), or the section heading"),
    snippet: z.string().optional().describe('Rows and sections: the line holding the match, cut to about 160 characters'),
    score: z.number().min(0).max(1).describe('1: a whole field equals the query; 0.9: a field starts with it; else 0.5 to 0.9 by how much of the text it covers'),
    workspace: z.object({
      id: z.string(),
      slug: z.string(),
      name: z.string(),
      mode: z.enum(['table', 'doc']),
      org: z.object({ slug: z.string(), name: z.string() }),
    }),
    surface: z.object({ id: z.string(), slug: z.string() }).nullable().describe('The sheet or doc surface of a row or section'),
    url: z.string().describe('Where the web app shows the hit'),
    apiUrl: z.string().describe('The REST resource of the hit (canonical org-prefixed path)'),
    updatedAt: IsoDateTime,
  })
  .meta({ id: 'SearchHit' });

export const SearchResult = z
  .object({
    hits: z.array(SearchHit),
    count: z
      .number()
      .int()
      .describe(
        'All matches, before `limit` and `offset`; when `countEstimated` is true, a lower bound: a broad query reads and ranks at most 1,000 matches of each kind, so there are more than this (docs/SEARCH.md)',
      ),
    countEstimated: z
      .boolean()
      .describe('True when a kind had more than 1,000 matches: the hits are the best of the first 1,000 of each kind, `count` is a lower bound, and paging ends there; narrow the query to see the rest'),
    took: z.number().int().describe('Milliseconds the search took on the server'),
  })
  .meta({ id: 'SearchResult' });

export type SearchHit = z.infer<typeof SearchHit>;
export type SearchResult = z.infer<typeof SearchResult>;
