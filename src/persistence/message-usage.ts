import { sql } from 'kysely';
import type { Executor } from './database';

/** The messages meter's counter: delivered messages per organisation and calendar UTC month. */

/**
 * Adds one delivered message unless the count has reached `ceiling`, in one
 * statement, so concurrent deliveries can never pass the ceiling. Returns
 * the new count, or null when the ceiling was already reached.
 */
export async function incrementMessageUsage(db: Executor, orgId: string, period: string, ceiling: number): Promise<number | null> {
  if (ceiling <= 0) return null;
  const { rows } = await sql<{ delivered: number }>`
    insert into message_usage (org_id, period, delivered) values (${orgId}, ${period}, 1)
    on conflict (org_id, period) do update set delivered = message_usage.delivered + 1
      where message_usage.delivered < ${ceiling}
    returning delivered
  `.execute(db);
  return rows[0] ? Number(rows[0].delivered) : null;
}

export async function readMessageUsage(db: Executor, orgId: string, period: string): Promise<number> {
  const row = await db.selectFrom('messageUsage').select('delivered').where('orgId', '=', orgId).where('period', '=', period).executeTakeFirst();
  return row?.delivered ?? 0;
}
