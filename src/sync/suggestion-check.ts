import type * as Y from 'yjs';
import { checkSuggestionOnlyUpdate } from '../model/doc/suggestions';
import type { ParsedDocumentName } from '../model/document-names';
import { checkTableSuggestionOnlyUpdate } from '../model/table/suggestions';

/**
 * Whether an update from a connection that may only suggest (a suggest-only
 * key, a commenter) changes nothing but its own suggestions
 * (docs/SUGGESTIONS.md). Checked before the update is applied, reading only
 * what the update touches (never a copy of the document), so a refused
 * update never reaches the live document and a suggester's keystroke costs
 * in proportion to itself. Returns the reason for a refusal, or null.
 */
export function suggestionOnlyRefusal(
  document: ParsedDocumentName,
  live: Y.Doc,
  update: Uint8Array,
  author: { principalType: 'user' | 'agent'; id: string },
): string | null {
  if (document.kind === 'html') return 'html pages take no suggestions';
  return document.kind === 'tables' ? checkTableSuggestionOnlyUpdate(live, update, author) : checkSuggestionOnlyUpdate(live, update, author);
}
