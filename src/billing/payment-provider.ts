import type { PlanName } from '../persistence/schema';

/**
 * Payments go through this interface (API-DECISIONS "Files": payments and
 * support go through provider interfaces with local defaults). The default,
 * `LocalPaymentProvider`, keeps everything in Trellis's own database and
 * serves its own checkout page, so billing works offline; a hosted provider
 * (Stripe and the like) implements the same methods and reports completed
 * checkouts by calling the domain's `completePaidCheckout` from its webhook.
 */

export type PaidPlan = Exclude<PlanName, 'free'>;

/** What a receipt shows of a card; never the number. */
export type CardOnFile = { brand: string; last4: string; expMonth: number; expYear: number };

/** The provider's references for one organisation, as stored on `orgs`. */
export type BillingAccount = { orgId: string; plan: PlanName; customerId: string | null; subscriptionId: string | null };

/** A page of the provider's that the customer's browser is sent to. */
export type HostedPage = { url: string; expiresAt: Date };

export type Subscription = {
  customerId: string;
  subscriptionId: string;
  /** Charged now for the rest of the period (negative: a credit) when the price changed mid-period. */
  prorationCents: number;
};

export interface PaymentProvider {
  /** Shown in the billing summary (`payments.provider`). */
  readonly name: string;
  /** The card the organisation pays with, or null when none is on file. */
  cardOnFile(account: BillingAccount): Promise<CardOnFile | null>;
  /** Moves the subscription to `plan` on the card on file, with proration (or starts one). */
  subscribe(account: BillingAccount, plan: PaidPlan, now: Date): Promise<Subscription>;
  /** Ends the subscription: called when a scheduled downgrade to free takes effect. */
  cancel(account: BillingAccount): Promise<void>;
  /** When the current billing period ends; a downgrade scheduled now takes effect then. */
  periodEnd(account: BillingAccount, now: Date): Date;
  /** A checkout where a person adds a card and subscribes to `plan`. */
  checkoutPage(account: BillingAccount, request: { plan: PaidPlan; requestedById: string; now: Date }): Promise<HostedPage>;
  /** A short-lived page where the customer manages the card on file. */
  portalPage(account: BillingAccount, request: { requestedById: string; now: Date }): Promise<HostedPage>;
}
