import type { Executor } from './database';
import type { Selectable } from 'kysely';
import type { LimitIncreaseRequestsTable, Org, PlanName } from './schema';

/** Plans on organisations, usage counts for the billing summary, limit-increase requests. */

export async function setOrgPlan(
  db: Executor,
  orgId: string,
  change: { plan: PlanName; customerId?: string | null; subscriptionId?: string | null; pendingDowngradeAt: Date | null },
  now: Date,
): Promise<Org> {
  return db
    .updateTable('orgs')
    .set({
      plan: change.plan,
      ...(change.customerId === undefined ? {} : { paymentCustomerId: change.customerId }),
      ...(change.subscriptionId === undefined ? {} : { paymentSubscriptionId: change.subscriptionId }),
      pendingDowngradeAt: change.pendingDowngradeAt,
      updatedAt: now,
    })
    .where('id', '=', orgId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setPendingDowngrade(db: Executor, orgId: string, at: Date | null, now: Date): Promise<Org> {
  return db.updateTable('orgs').set({ pendingDowngradeAt: at, updatedAt: now }).where('id', '=', orgId).returningAll().executeTakeFirstOrThrow();
}

/** Orgs whose scheduled downgrade is due, oldest first. */
export async function findDueDowngrades(db: Executor, now: Date, limit: number): Promise<Org[]> {
  return db.selectFrom('orgs').selectAll().where('pendingDowngradeAt', '<=', now).orderBy('pendingDowngradeAt').limit(limit).execute();
}

/**
 * Applies a due downgrade to free; undefined when it is no longer due (it
 * was cancelled, or another instance applied it first).
 */
export async function applyDowngrade(db: Executor, orgId: string, now: Date): Promise<Org | undefined> {
  return db
    .updateTable('orgs')
    .set({ plan: 'free', paymentSubscriptionId: null, pendingDowngradeAt: null, updatedAt: now })
    .where('id', '=', orgId)
    .where('pendingDowngradeAt', '<=', now)
    .returningAll()
    .executeTakeFirst();
}

/** Rows in the org's live workspaces, in all and for the fullest few. */
export async function countOrgRows(db: Executor, orgId: string, fullest: number) {
  const perWorkspace = await db
    .selectFrom('workspaces')
    .innerJoin('tableRows', 'tableRows.workspaceId', 'workspaces.id')
    .select(['workspaces.id', 'workspaces.slug', 'workspaces.name'])
    .select((eb) => eb.fn.countAll<number>().as('rows'))
    .where('workspaces.orgId', '=', orgId)
    .where('workspaces.archivedAt', 'is', null)
    .groupBy(['workspaces.id', 'workspaces.slug', 'workspaces.name'])
    .orderBy('rows', 'desc')
    .orderBy('workspaces.slug')
    .execute();
  const rows = perWorkspace.map((w) => ({ ...w, rows: Number(w.rows) }));
  return { total: rows.reduce((sum, w) => sum + w.rows, 0), fullest: rows.slice(0, fullest) };
}

export type LimitIncreaseRequest = Selectable<LimitIncreaseRequestsTable>;

export async function insertLimitIncreaseRequest(db: Executor, request: LimitIncreaseRequest): Promise<LimitIncreaseRequest> {
  const row = await db.insertInto('limitIncreaseRequests').values(request).returningAll().executeTakeFirstOrThrow();
  return { ...row, desiredValue: Number(row.desiredValue), currentCap: row.currentCap === null ? null : Number(row.currentCap) };
}

/** Referees (users who signed up through a referral) who own the org: the org paying activates them. */
export async function markReferralsActivated(db: Executor, orgId: string, at: Date) {
  await db
    .updateTable('referralSignups')
    .set({ activatedAt: at })
    .where('activatedAt', 'is', null)
    .where('userId', 'in', (eb) => eb.selectFrom('orgMembers').select('userId').where('orgId', '=', orgId).where('role', '=', 'owner'))
    .execute();
}
