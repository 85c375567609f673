import type { Executor } from './database';
import type { PlanName } from './schema';

/** The local payment provider's own records: customers with a card on file, checkout and portal sessions. */

export type StoredCard = { brand: string; last4: string; expMonth: number; expYear: number };

export async function findLocalCustomer(db: Executor, orgId: string) {
  return db.selectFrom('localPaymentCustomers').selectAll().where('orgId', '=', orgId).executeTakeFirst();
}

/** The org's customer, created on first use; `card` replaces the card on file when given. */
export async function upsertLocalCustomer(db: Executor, customer: { id: string; orgId: string; card?: StoredCard }, now: Date) {
  const card = customer.card
    ? { cardBrand: customer.card.brand, cardLast4: customer.card.last4, cardExpMonth: customer.card.expMonth, cardExpYear: customer.card.expYear }
    : {};
  return db
    .insertInto('localPaymentCustomers')
    .values({ id: customer.id, orgId: customer.orgId, ...card, createdAt: now, updatedAt: now })
    .onConflict((oc) => oc.column('orgId').doUpdateSet({ ...card, updatedAt: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertLocalSession(
  db: Executor,
  session: { id: string; tokenHash: string; kind: 'checkout' | 'portal'; orgId: string; plan: Exclude<PlanName, 'free'> | null; createdById: string; createdAt: Date; expiresAt: Date },
) {
  await db.insertInto('localPaymentSessions').values(session).execute();
}

/** A session by its token's hash, with its org, while it has not expired. */
export async function findLocalSession(db: Executor, kind: 'checkout' | 'portal', tokenHash: string, now: Date) {
  return db
    .selectFrom('localPaymentSessions')
    .innerJoin('orgs', 'orgs.id', 'localPaymentSessions.orgId')
    .select([
      'localPaymentSessions.id',
      'localPaymentSessions.orgId',
      'localPaymentSessions.plan',
      'localPaymentSessions.createdById',
      'localPaymentSessions.expiresAt',
      'localPaymentSessions.completedAt',
      'orgs.name as orgName',
      'orgs.plan as orgPlan',
    ])
    .where('localPaymentSessions.kind', '=', kind)
    .where('localPaymentSessions.tokenHash', '=', tokenHash)
    .where('localPaymentSessions.expiresAt', '>', now)
    .executeTakeFirst();
}

/** Marks a checkout completed; false when another submission completed it first. */
export async function completeLocalSession(db: Executor, id: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('localPaymentSessions')
    .set({ completedAt: now })
    .where('id', '=', id)
    .where('completedAt', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return Boolean(row);
}
