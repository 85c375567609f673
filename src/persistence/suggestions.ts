import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { PrincipalKind, SuggestionsTable } from './schema';

/** The suggestions projection (docs/SUGGESTIONS.md): who suggested what, its status and who decided it. */

export type SuggestionRecord = Selectable<SuggestionsTable>;
export type NewSuggestion = Insertable<SuggestionsTable>;

/** Records suggestions first seen in a document; one already recorded is left as it is. Returns the ids that were new. */
export async function insertSuggestions(db: Executor, suggestions: readonly NewSuggestion[]): Promise<string[]> {
  if (suggestions.length === 0) return [];
  const inserted = await db
    .insertInto('suggestions')
    .values([...suggestions])
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .execute();
  return inserted.map((row) => row.id);
}

export async function findSuggestion(db: Executor, id: string): Promise<SuggestionRecord | undefined> {
  return db.selectFrom('suggestions').selectAll().where('id', '=', id).executeTakeFirst();
}

export type SuggestionFilter = { workspaceId: string; surfaceId?: string; status: 'open' | 'accepted' | 'rejected' | 'all'; limit: number };

/** A workspace's suggestions, oldest first (the order to review them in). */
export async function listSuggestions(db: Executor, filter: SuggestionFilter): Promise<SuggestionRecord[]> {
  let query = db.selectFrom('suggestions').selectAll().where('workspaceId', '=', filter.workspaceId);
  if (filter.surfaceId) query = query.where('surfaceId', '=', filter.surfaceId);
  if (filter.status !== 'all') query = query.where('status', '=', filter.status);
  return query.orderBy('createdAt').orderBy('id').limit(filter.limit).execute();
}

/**
 * Decides an open suggestion; false when it was decided already (by this
 * call's competitor: the status is checked and set in one statement).
 */
export async function markSuggestionDecided(
  db: Executor,
  id: string,
  decision: { status: 'accepted' | 'rejected'; by: { principalType: PrincipalKind; id: string }; at: Date; summary: string },
): Promise<boolean> {
  const updated = await db
    .updateTable('suggestions')
    .set({ status: decision.status, decidedByType: decision.by.principalType, decidedById: decision.by.id, decidedAt: decision.at, summary: decision.summary })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** The summary of an open suggestion grows while its author types; kept current for lists and notifications. */
export async function updateSuggestionSummary(db: Executor, id: string, summary: string): Promise<void> {
  await db.updateTable('suggestions').set({ summary }).where('id', '=', id).where('status', '=', 'open').execute();
}
