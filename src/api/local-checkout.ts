import { z } from 'zod';
import type { LocalPaymentProvider, OpenSession } from '../billing/local-payments';
import type { CardOnFile } from '../billing/payment-provider';
import { checkTestCard, type CardCheck } from '../billing/test-cards';
import { completePaidCheckout, recordCardUpdate } from '../domain/billing';
import { ApiError, errors } from '../errors';
import type { App } from '../http/types';
import { htmlResponse, sendPage, sendPageError } from '../http/html-page';
import { escapeHtml, renderPage } from '../lib/html';
import { capsFor } from '../limits/plans';
import { HOUR } from '../limits/rules';
import type { Services } from '../domain/services';
import { ErrorBody } from '../model/schemas/common';

/**
 * The local payment provider's pages: the checkout a `checkoutUrl` leads to
 * and the customer portal. Plain server-rendered HTML forms (no script), so
 * they work in any browser and from a test that fetches and submits them.
 * The token in the URL is the capability, as with a hosted checkout; only
 * its hash is stored. Served only while the local provider is in use.
 * Not operations: they answer HTML pages and 303 redirects, and take form posts.
 * Their errors are pages for a browser and the JSON error for a client that
 * asks for JSON (src/http/html-page.ts).
 */

const TokenParams = z.object({ token: z.string().min(1).max(100) });
const CardForm = z
  .object({
    number: z.string().max(100),
    expiry: z.string().max(20),
    cvc: z.string().max(10),
    name: z.string().max(200),
  })
  .partial();

// The other errors (bad shapes, limits) are declared by the platform, as an error page or the error as JSON.
const showResponses = { 200: htmlResponse('The checkout or portal page'), 404: htmlResponse('The link is unknown or has expired') };
const submitResponses = {
  ...showResponses,
  303: z.null().describe('Back to the page after a submission'),
  422: {
    description: 'The page again, naming what was wrong with the card (`details[0].path` names the field), or a field over its length',
    content: { 'text/html': { schema: z.string().describe('HTML page') }, 'application/json': { schema: ErrorBody } },
  },
};
// Card attempts per client address: enough for typos, not for trying numbers.
const cardAttempts = { endpoint: 'local_checkout', limit: 30, windowMs: HOUR, bucket: (request: { ip: string }) => request.ip };

const price = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const planLabel = (plan: string) => plan.charAt(0).toUpperCase() + plan.slice(1);

type Session = NonNullable<OpenSession>;

/** One page of the provider: what it shows for a live session, and what a valid card does there. */
type SessionPage = {
  kind: 'checkout' | 'portal';
  show: { summary: string; description: string };
  submit: { summary: string; description: string };
  render(services: Services, session: Session, action: string, refused?: { check: CardCheck; expiry?: string }): string;
  accept(services: Services, provider: LocalPaymentProvider, session: Session, card: CardOnFile, now: Date): Promise<void>;
};

const PAGES: SessionPage[] = [
  {
    kind: 'checkout',
    show: { summary: 'Local checkout page (HTML)', description: 'The page a `checkoutUrl` of the local provider opens; after payment, the receipt.' },
    submit: {
      summary: 'Submit the local checkout (HTML form)',
      description: 'Form fields `number`, `expiry` (MM/YY), `cvc`, `name`. A valid test card switches the plan at once and redirects (303) back to the page, now the receipt.',
    },
    render: (services, session, action, refused) =>
      session.completedAt ? completedPage(services, session) : checkoutForm(session, action, refused?.check, refused?.expiry),
    accept: async (services, provider, session, card, now) => {
      // A double submit completes once; the second lands on the same receipt.
      if (await provider.saveCard(session, card, now, { completeCheckout: true })) {
        await completePaidCheckout(services, session.orgId, session.plan!, session.createdById);
      }
    },
  },
  {
    kind: 'portal',
    show: { summary: 'Local customer portal (HTML)', description: 'The page a portal `url` of the local provider opens: the plan and the card on file.' },
    submit: { summary: 'Replace the card on file (HTML form)', description: 'Form fields `number`, `expiry` (MM/YY), `cvc`. Redirects (303) back to the portal.' },
    render: (services, session, action, refused) => portalPage(services, session, action, refused?.check),
    accept: async (services, provider, session, card, now) => {
      await provider.saveCard(session, card, now, { completeCheckout: false });
      await recordCardUpdate(services, session.orgId, card, session.createdById);
    },
  },
];

export async function localCheckoutRoutes(app: App, services: Services, provider: LocalPaymentProvider) {
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.setErrorHandler((error, request, reply) => sendPageError(request, reply, error, refusedPage));

    for (const page of PAGES) {
      const url = `/billing/${page.kind}/:token`;
      scope.get(
        url,
        { schema: { ...page.show, tags: ['billing'], params: TokenParams, response: showResponses }, config: { auth: 'none', metered: false } },
        async (request, reply) => {
          const session = await provider.openSession(page.kind, request.params.token, services.clock.now());
          if (!session) return sendPageError(request, reply, expired(page.kind), () => expiredPage(page.kind));
          return sendPage(reply, 200, page.render(services, session, request.url));
        },
      );

      scope.post(
        url,
        {
          schema: { ...page.submit, tags: ['billing'], params: TokenParams, body: CardForm, response: submitResponses },
          config: { auth: 'none', metered: false, rateLimits: [cardAttempts] },
        },
        async (request, reply) => {
          const now = services.clock.now();
          const session = await provider.openSession(page.kind, request.params.token, now);
          if (!session) return sendPageError(request, reply, expired(page.kind), () => expiredPage(page.kind));
          if (session.completedAt) return reply.redirect(request.url, 303);
          const check = checkTestCard(request.body ?? {}, now);
          if (!check.ok) {
            const refused = errors.validation(check.message, [{ path: [check.field], code: 'card_refused', message: check.message }]);
            return sendPageError(request, reply, refused, () => page.render(services, session, request.url, { check, expiry: request.body?.expiry }));
          }
          await page.accept(services, provider, session, check.card, now);
          return reply.redirect(request.url, 303);
        },
      );
    }
  });
}

const linkName = (kind: 'checkout' | 'portal') => (kind === 'checkout' ? 'checkout' : 'billing portal');

function expired(kind: 'checkout' | 'portal') {
  return new ApiError(404, 'not_found', `This ${linkName(kind)} link is unknown or has expired; start again from the billing settings.`);
}

function expiredPage(kind: 'checkout' | 'portal') {
  return renderPage('Link expired', `<h1>This ${linkName(kind)} link is not valid</h1><p>It may have expired. Start again from the billing settings in Trellis.</p>`);
}

/** A request the page cannot take (a field too long, a body of the wrong type, too many attempts). */
function refusedPage(error: ApiError) {
  return renderPage('Request refused', `<h1>This request cannot be taken</h1><p>${escapeHtml(error.message)}</p><p>Go back and try again, or start again from the billing settings in Trellis.</p>`);
}

function cardFields(check?: CardCheck, expiry?: string) {
  const error = check && !check.ok ? `<p class="error" role="alert">${escapeHtml(check.message)}</p>` : '';
  return `${error}
<label for="number">Card number</label>
<input id="number" name="number" inputmode="numeric" autocomplete="cc-number" required>
<label for="expiry">Expiry (MM/YY)</label>
<input id="expiry" name="expiry" autocomplete="cc-exp" placeholder="MM/YY" value="${escapeHtml(expiry ?? '')}" required>
<label for="cvc">Security code</label>
<input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" required>
<p class="muted">Local test payments: no card is charged. Use 4242 4242 4242 4242 with any future expiry and any 3 digits; 4000 0000 0000 0002 is declined.</p>`;
}

function checkoutForm(session: Session, action: string, check?: CardCheck, expiry?: string) {
  const plan = session.plan!;
  return renderPage(
    `Upgrade to ${planLabel(plan)}`,
    `<h1>Upgrade ${escapeHtml(session.orgName)} to ${planLabel(plan)}</h1>
<p>${price(capsFor(plan).monthlyPriceCents)} per month, billed by calendar month; this month is prorated.</p>
<form method="post" action="${escapeHtml(action)}">
<label for="name">Name on card</label>
<input id="name" name="name" autocomplete="cc-name">
${cardFields(check, expiry)}
<button type="submit">Pay and switch to ${planLabel(plan)}</button>
</form>`,
  );
}

function completedPage(services: Services, session: Session) {
  const card = session.card ? ` Paid with ${escapeHtml(session.card.brand)} ending ${escapeHtml(session.card.last4)}.` : '';
  return renderPage(
    'Payment complete',
    `<h1>Payment complete</h1>
<p>${escapeHtml(session.orgName)} is on the ${planLabel(session.orgPlan)} plan.${card}</p>
<p><a href="${escapeHtml(`${services.config.publicUrl}/settings/billing`)}">Back to Trellis</a></p>`,
  );
}

function portalPage(services: Services, session: Session, action: string, check?: CardCheck) {
  const card = session.card
    ? `${escapeHtml(session.card.brand)} ending ${escapeHtml(session.card.last4)}, expires ${String(session.card.expMonth).padStart(2, '0')}/${session.card.expYear}`
    : 'none';
  return renderPage(
    'Billing',
    `<h1>Billing for ${escapeHtml(session.orgName)}</h1>
<dl><dt>Plan</dt><dd>${planLabel(session.orgPlan)}</dd><dt>Card on file</dt><dd>${card}</dd></dl>
<form method="post" action="${escapeHtml(action)}">
<h2>Replace the card</h2>
${cardFields(check)}
<button type="submit">Save card</button>
</form>
<p><a href="${escapeHtml(`${services.config.publicUrl}/settings/billing`)}">Back to Trellis</a> to change the plan.</p>`,
  );
}
