import { z } from 'zod';
import { normaliseEmail } from '../domain/accounts';
import { recordReferralClick, REFERRAL_CODE_PATTERN, referralSummary } from '../domain/referrals';
import { requireCaller } from '../access/callers';
import { errors } from '../errors';
import { MINUTE } from '../limits/rules';
import { Email, IsoDateTime } from '../model/schemas/common';
import { defineOperation } from './operation';

const ClickBody = z.strictObject({
  code: z.string().regex(REFERRAL_CODE_PATTERN, 'a referral code: 4 to 32 lowercase letters and digits'),
  refereeEmail: Email.optional().describe('The visitor, when known: a later sign-up with this address is attributed to the code'),
  via: z.string().trim().min(1).max(100).optional().describe('Where the link was shared (a channel, a campaign)'),
});

const ReferralSummary = z
  .object({
    code: z.string(),
    url: z.string().describe('A link carrying the code'),
    clicks: z.number().int().describe('This calendar month (UTC)'),
    signedUp: z.number().int().describe('Referees who created an account this month'),
    activated: z.number().int().describe('Referees whose organisation moved to a paid plan this month'),
    daysLeftInMonth: z.number().int(),
    monthEndsAt: IsoDateTime,
    allTime: z.object({ clicks: z.number().int(), signedUp: z.number().int(), activated: z.number().int() }),
    recentClicks: z.array(z.object({ at: IsoDateTime, via: z.string().nullable(), withEmail: z.boolean() })).describe('The last 20, newest first'),
  })
  .meta({ id: 'ReferralSummary' });

/** Referral codes and clicks (docs/BILLING.md, "Referrals"). */
export const referralOperations = {
  summary: defineOperation(
    {
      response: ReferralSummary,
      rest: {
        method: 'GET',
        path: '/api/referrals/me',
        summary: 'Your referral code and how it is doing',
        description: "The caller's code (made on first read; an agent's is its owner's), this month's clicks, sign-ups and activations, the days left in the month, all-time totals and recent clicks.",
        tags: ['referrals'],
      },
    },
    async (services, actor) => referralSummary(services, requireCaller(actor)),
  ),
  click: defineOperation(
    {
      body: ClickBody, response: z.object({ recorded: z.boolean() }),
      rest: {
        method: 'POST',
        path: '/api/referrals/click',
        summary: 'Record a click on a referral link',
        description:
          'No authentication (the visitor has no account yet). Attribution is stored hashed: the referee e-mail, and the visitor (IP and user agent). ' +
          'The same visitor clicking the same code again within an hour is not counted again (`recorded: false`). Unknown code: 404. 30 per minute per IP.',
        tags: ['referrals'],
        config: { auth: 'none', rateLimits: [{ endpoint: 'referral_clicks', limit: 30, windowMs: MINUTE, bucket: (request) => request.ip }] },
      },
    },
    async (services, _actor, { body }, http) => {
      // The visitor is who clicked: only a REST call has one.
      if (!http?.client) throw errors.badRequest('A referral click comes from a browser.');
      const { code, refereeEmail, via } = body;
      return recordReferralClick(services, { code, via, refereeEmail: refereeEmail === undefined ? undefined : normaliseEmail(refereeEmail) }, http.client);
    },
  ),
};
