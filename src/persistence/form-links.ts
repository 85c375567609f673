import type { Executor } from './database';

/** Public tokens of form views (migration 0120): one per view, made once and kept. */

/** The token of each view, made with `makeToken` for views that have none yet. */
export async function ensureFormTokens(db: Executor, workspaceId: string, viewIds: readonly string[], makeToken: () => string): Promise<Map<string, string>> {
  if (viewIds.length === 0) return new Map();
  const found = await db.selectFrom('formLinks').select(['viewId', 'token']).where('workspaceId', '=', workspaceId).where('viewId', 'in', viewIds).execute();
  const tokens = new Map(found.map((link) => [link.viewId, link.token]));
  const missing = viewIds.filter((id) => !tokens.has(id));
  if (missing.length > 0) {
    // Two readers at once: the first insert wins, the second reads it back.
    await db
      .insertInto('formLinks')
      .values(missing.map((viewId) => ({ token: makeToken(), workspaceId, viewId })))
      .onConflict((oc) => oc.columns(['workspaceId', 'viewId']).doNothing())
      .execute();
    const made = await db.selectFrom('formLinks').select(['viewId', 'token']).where('workspaceId', '=', workspaceId).where('viewId', 'in', missing).execute();
    for (const link of made) tokens.set(link.viewId, link.token);
  }
  return tokens;
}

export async function findFormLink(db: Executor, token: string): Promise<{ workspaceId: string; viewId: string } | null> {
  return (await db.selectFrom('formLinks').select(['workspaceId', 'viewId']).where('token', '=', token).executeTakeFirst()) ?? null;
}
