import type { Executor } from './database';

/** Pending confirmations of dangerous MCP tools; tokens arrive hashed. */

export async function insertConfirmation(
  db: Executor,
  confirmation: { tokenHash: string; caller: string; tool: string; argumentsHash: string; createdAt: Date; expiresAt: Date },
) {
  // Expired ones go when new ones come: the table holds at most a minute of confirmations.
  await db.deleteFrom('mcpConfirmations').where('expiresAt', '<=', confirmation.createdAt).execute();
  await db.insertInto('mcpConfirmations').values(confirmation).execute();
}

/**
 * Deletes and reports the confirmation if it matches the caller, the tool
 * and the arguments and has not expired: one statement, so a token confirms
 * at most one call even when two arrive at once.
 */
export async function consumeConfirmation(
  db: Executor,
  match: { tokenHash: string; caller: string; tool: string; argumentsHash: string; now: Date },
): Promise<boolean> {
  const row = await db
    .deleteFrom('mcpConfirmations')
    .where('tokenHash', '=', match.tokenHash)
    .where('caller', '=', match.caller)
    .where('tool', '=', match.tool)
    .where('argumentsHash', '=', match.argumentsHash)
    .where('expiresAt', '>', match.now)
    .returning('tokenHash')
    .executeTakeFirst();
  return Boolean(row);
}
