import { sql } from 'kysely';
import type { Executor } from './database';

/** The monthly API-call meter's counter: calls per organisation and calendar UTC month. */

export async function readApiUsage(db: Executor, orgId: string, period: string): Promise<number> {
  const row = await db.selectFrom('apiUsage').select('calls').where('orgId', '=', orgId).where('period', '=', period).executeTakeFirst();
  return row?.calls ?? 0;
}

/** Adds calls to a period's count; a deleted organisation's last calls are dropped (`from orgs`) instead of breaking the foreign key. */
export async function addApiUsage(db: Executor, orgId: string, period: string, calls: number): Promise<void> {
  await sql`
    insert into api_usage (org_id, period, calls)
    select id, ${period}::text, ${calls}::integer from orgs where id = ${orgId}
    on conflict (org_id, period) do update set calls = api_usage.calls + excluded.calls
  `.execute(db);
}
