import { z } from 'zod';
import { WriteMode } from '../model/schemas/suggestions';
import type { RestRequest } from './operation';

/** `?mode=suggest` on a write route whose body also takes `mode` (docs/SUGGESTIONS.md). */
export const ModeQuery = { mode: WriteMode };

/**
 * REST takes a write's mode in the query or the body; operations read it
 * from the body (an MCP tool has one `mode` argument). The query's wins:
 * it is what a client adds to a write it already sends.
 */
export function withModeFromQuery(request: RestRequest): RestRequest {
  const { mode, ...query } = (request.query ?? {}) as { mode?: string };
  if (mode === undefined) return { ...request, query };
  return { ...request, query, body: { ...((request.body ?? {}) as object), mode } };
}

export type WithMode = { mode?: z.infer<typeof WriteMode> };
