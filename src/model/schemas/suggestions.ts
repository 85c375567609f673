import { z } from 'zod';
import { IsoDateTime, Principal } from './common';

/** docs/SUGGESTIONS.md: a proposed change to a doc or a row that an editor accepts or rejects. */
export const SUGGESTION_STATUSES = ['open', 'accepted', 'rejected'] as const;
export type SuggestionStatus = (typeof SUGGESTION_STATUSES)[number];

export const SUGGESTION_TARGETS = ['doc', 'row'] as const;
export type SuggestionTarget = (typeof SUGGESTION_TARGETS)[number];

export const ROW_SUGGESTION_KINDS = ['create', 'update', 'delete'] as const;
export type RowSuggestionKind = (typeof ROW_SUGGESTION_KINDS)[number];

/** A cell the suggester wrote on a base that someone changed since: their base, the value now, and the suggested one. */
export const SuggestionConflict = z
  .object({
    column: z.string(),
    base: z.unknown().describe('The cell as the suggester read it'),
    current: z.unknown().describe('The cell now'),
    suggested: z.unknown().describe('The suggested value'),
  })
  .meta({ id: 'SuggestionConflict' });

export const RowSuggestionChange = z
  .object({
    kind: z.enum(ROW_SUGGESTION_KINDS),
    values: z.record(z.string(), z.unknown()).optional().describe('create and update: the suggested cells, by column key'),
    previous: z.record(z.string(), z.unknown()).optional().describe('update and delete: the same cells as they are now (or were when it was decided)'),
    conflicts: z.array(SuggestionConflict).optional().describe('Cells changed by someone else since the base the suggester named (`If-Match` / `baseVersion`)'),
  })
  .meta({ id: 'RowSuggestionChange' });

export const Suggestion = z
  .object({
    id: z.string(),
    surfaceId: z.string(),
    target: z.enum(SUGGESTION_TARGETS),
    rowId: z.string().optional(),
    status: z.enum(SUGGESTION_STATUSES),
    author: Principal,
    createdAt: IsoDateTime,
    decidedBy: Principal.optional(),
    decidedAt: IsoDateTime.optional(),
    summary: z.string().describe('A doc suggestion: its inserted and removed text; a row suggestion: what it would change'),
    inserted: z.string().optional().describe('Doc: the text the suggestion inserts'),
    removed: z.string().optional().describe('Doc: the text the suggestion removes'),
    context: z
      .object({ before: z.string(), after: z.string() })
      .optional()
      .describe('Doc, while open: up to 80 characters of the text around it'),
    change: RowSuggestionChange.optional().describe('Row: the suggested change'),
  })
  .meta({ id: 'Suggestion' });
export type Suggestion = z.infer<typeof Suggestion>;

/** How a doc or row write is taken: applied (the default), or held as a suggestion for an editor to decide (answered 202). */
export const WriteMode = z
  .enum(['apply', 'suggest'])
  .optional()
  .describe('`suggest`: nothing is applied; the change is held as a suggestion that an editor accepts or rejects (202 `{ suggestion }`, docs/SUGGESTIONS.md). Also accepted as `?mode=suggest`');

/** The 202 answer of a write sent as a suggestion. */
export const SuggestionCreated = z.object({ suggestion: Suggestion }).meta({ id: 'SuggestionCreated' });
