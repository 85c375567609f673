import type * as Y from 'yjs';
import type { SeenSuggestion } from './suggestion-records';

/** Suggestions a doc transaction marked (src/model/doc/suggestions.ts). */
export function docSuggestionsSeen(_doc: Y.Doc, _transaction: Y.Transaction, _surfaceId: string): SeenSuggestion[] {
  return [];
}

/** Row suggestions a table transaction added (src/model/table/suggestions.ts). */
export function rowSuggestionsSeen(_doc: Y.Doc, _transaction: Y.Transaction): SeenSuggestion[] {
  return [];
}
