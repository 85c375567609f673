import type * as Y from 'yjs';
import { readDocBody } from '../model/doc/body';
import { docSuggestions, docSuggestionSummary, suggestionStampsIn } from '../model/doc/suggestions';
import { rowSuggestionStampsIn, rowSuggestionSummary } from '../model/table/suggestions';
import type { SeenSuggestion } from './suggestion-records';

/**
 * Suggestions a transaction made, for the observer to record once each.
 * Typing in suggesting mode extends one suggestion keystroke by keystroke:
 * the ids already seen in this document are not recorded again (the
 * projection would ignore them anyway, but not without a statement per
 * keystroke). After a restart the first keystroke of an old suggestion
 * looks new once; the projection keeps the first record.
 */
const seenIds = new WeakMap<Y.Doc, Set<string>>();

function unseen(doc: Y.Doc, ids: readonly string[]): Set<string> {
  let seen = seenIds.get(doc);
  if (!seen) seenIds.set(doc, (seen = new Set()));
  const fresh = new Set(ids.filter((id) => !seen!.has(id)));
  for (const id of fresh) seen.add(id);
  return fresh;
}

/** Suggestions a doc transaction marked (src/model/doc/suggestions.ts), with their text so far as the summary. */
export function docSuggestionsSeen(doc: Y.Doc, transaction: Y.Transaction, surfaceId: string): SeenSuggestion[] {
  const stamps = suggestionStampsIn(transaction);
  if (stamps.length === 0) return [];
  const fresh = unseen(doc, stamps.map((stamp) => stamp.id));
  if (fresh.size === 0) return [];
  const views = new Map(docSuggestions(readDocBody(doc)).map((view) => [view.id, view]));
  return stamps
    .filter((stamp) => fresh.has(stamp.id))
    .map((stamp) => {
      const view = views.get(stamp.id);
      const summary = view ? docSuggestionSummary(view) : '';
      return { id: stamp.id, surfaceId, target: 'doc' as const, author: stamp.author, at: stamp.at, summary };
    });
}

/** Row suggestions a table transaction added (src/model/table/suggestions.ts). */
export function rowSuggestionsSeen(doc: Y.Doc, transaction: Y.Transaction): SeenSuggestion[] {
  const entries = rowSuggestionStampsIn(transaction);
  if (entries.length === 0) return [];
  const fresh = unseen(doc, entries.map((entry) => entry.id));
  return entries
    .filter((entry) => fresh.has(entry.id))
    .map((entry) => ({
      id: entry.id,
      surfaceId: entry.sheetId,
      target: 'row' as const,
      rowId: entry.rowId,
      author: entry.author,
      at: entry.at,
      summary: rowSuggestionSummary(entry),
    }));
}
