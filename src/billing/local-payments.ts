import type { Config } from '../config';
import { newId } from '../lib/ids';
import { hashToken, randomToken } from '../lib/secrets';
import { monthOf } from '../limits/monthly-meter';
import { capsFor } from '../limits/plans';
import type { Db } from '../persistence/database';
import {
  completeLocalSession,
  findLocalCustomer,
  findLocalSession,
  insertLocalSession,
  upsertLocalCustomer,
  type StoredCard,
} from '../persistence/local-payments';
import type { BillingAccount, CardOnFile, HostedPage, PaidPlan, PaymentProvider, Subscription } from './payment-provider';

/** A checkout link works for a day, as hosted checkouts do; a portal link for an hour. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60_000;
export const PORTAL_TTL_MS = 60 * 60_000;

export type OpenSession = Awaited<ReturnType<LocalPaymentProvider['openSession']>>;

/**
 * The default payment provider: no outside service. Customers, cards (brand,
 * last four, expiry) and sessions live in Trellis's database; the checkout
 * and portal are pages Trellis serves (`src/api/local-checkout.ts`). Billing
 * periods are calendar UTC months, like the API meter.
 */
export class LocalPaymentProvider implements PaymentProvider {
  readonly name = 'local';

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'publicUrl'>,
  ) {}

  async cardOnFile(account: BillingAccount): Promise<CardOnFile | null> {
    const customer = await findLocalCustomer(this.db, account.orgId);
    if (!customer?.cardLast4) return null;
    return { brand: customer.cardBrand ?? 'card', last4: customer.cardLast4, expMonth: customer.cardExpMonth ?? 0, expYear: customer.cardExpYear ?? 0 };
  }

  async subscribe(account: BillingAccount, plan: PaidPlan, now: Date): Promise<Subscription> {
    const customer = await findLocalCustomer(this.db, account.orgId);
    if (!customer?.cardLast4) throw new Error('no card on file');
    const { start, end } = this.period(now);
    const remaining = (end.getTime() - now.getTime()) / (end.getTime() - start.getTime());
    const priceChange = capsFor(plan).monthlyPriceCents - capsFor(account.plan).monthlyPriceCents;
    return {
      customerId: customer.id,
      subscriptionId: account.subscriptionId ?? newId('sub'),
      prorationCents: Math.round(priceChange * remaining),
    };
  }

  async cancel(): Promise<void> {
    // A local subscription is only its id on the org, which the domain clears.
  }

  periodEnd(_account: BillingAccount, now: Date): Date {
    return this.period(now).end;
  }

  checkoutPage(account: BillingAccount, request: { plan: PaidPlan; requestedById: string; now: Date }): Promise<HostedPage> {
    return this.startSession('checkout', account, request.plan, request.requestedById, request.now, CHECKOUT_TTL_MS);
  }

  portalPage(account: BillingAccount, request: { requestedById: string; now: Date }): Promise<HostedPage> {
    return this.startSession('portal', account, null, request.requestedById, request.now, PORTAL_TTL_MS);
  }

  // The pages' side (src/api/local-checkout.ts)

  /** A live session named by the token in its URL, or undefined (unknown or expired). */
  async openSession(kind: 'checkout' | 'portal', token: string, now: Date) {
    const session = await findLocalSession(this.db, kind, hashToken(token), now);
    if (!session) return undefined;
    return { ...session, card: await this.cardOnFile({ orgId: session.orgId, plan: session.orgPlan, customerId: null, subscriptionId: null }) };
  }

  /** Stores the card for the session's org; for a checkout, also marks it used (false when it already was). */
  async saveCard(session: { id: string; orgId: string }, card: StoredCard, now: Date, options: { completeCheckout: boolean }) {
    if (options.completeCheckout && !(await completeLocalSession(this.db, session.id, now))) return null;
    const existing = await findLocalCustomer(this.db, session.orgId);
    return upsertLocalCustomer(this.db, { id: existing?.id ?? newId('cus'), orgId: session.orgId, card }, now);
  }

  private period(now: Date) {
    return { start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), end: monthOf(now).resetAt };
  }

  private async startSession(kind: 'checkout' | 'portal', account: BillingAccount, plan: PaidPlan | null, requestedById: string, now: Date, ttlMs: number) {
    const token = randomToken();
    const expiresAt = new Date(now.getTime() + ttlMs);
    await insertLocalSession(this.db, {
      id: newId(kind === 'checkout' ? 'cs' : 'ps'),
      tokenHash: hashToken(token),
      kind,
      orgId: account.orgId,
      plan,
      createdById: requestedById,
      createdAt: now,
      expiresAt,
    });
    return { url: `${this.config.publicUrl}/billing/${kind}/${token}`, expiresAt };
  }
}
