import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp, type Credential } from '../helpers/app';
import { addComment, expectStatus } from '../comments/helpers';
import { createWorkspace, elevateForKeys, mint, signInPerson, type Person } from '../keys/fixtures';
import { setPlan } from './helpers';

/**
 * The messages meter in billing (SPEC "Plan caps", docs/BILLING.md
 * "Messages"): deliveries counted by the meter show in GET /api/billing, and
 * overage beyond the bundle is priced by tier into `monthlyTotalCents`.
 * Usage is set on the meter's own row to reach the tiers (tens of thousands
 * of wake-ups would take hours); one delivery goes through the API.
 */

let t: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock(new Date('2027-03-10T12:00:00Z'));
const PERIOD = '2027-03';
let ada: Person;
let agent: { id: string; as: Credential };
let rowId: string;

beforeAll(async () => {
  t = await startTestApp({ clock });
  ada = await signInPerson(t, 'ada@messages.test');
  await createWorkspace(t, ada, { slug: 'team' });
  await elevateForKeys(t, ada);
  const minted = await mint(t, ada, { agentName: 'scribe', role: 'editor' });
  agent = { id: minted.key.agent.id, as: minted.as };
  rowId = (await expectStatus(t.request('POST', '/api/workspaces/team/rows', { as: ada.as, body: { data: { title: 'one' } } }), 200)).body.id;
});

afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const billing = async () => (await expectStatus(t.request('GET', '/api/billing', { as: ada.as }), 200)).body;

async function setDelivered(delivered: number) {
  await t.services.db
    .insertInto('messageUsage')
    .values({ orgId: ada.orgId, period: PERIOD, delivered })
    .onConflict((oc) => oc.columns(['orgId', 'period']).doUpdateSet({ delivered }))
    .execute();
}

describe('messages in billing', () => {
  it('counts a delivered wake-up through the API; free has no overage', async () => {
    expect(await billing()).toMatchObject({ plan: 'free', messagesThisMonth: 0, messagesOverage: 0, messagesOverageCents: 0, monthlyTotalCents: 0 });
    const comment = await addComment(t, ada.as, 'team', { target: { type: 'row', rowId }, body: '@scribe please look', mentions: [{ kind: 'agent', id: agent.id, label: 'scribe' }] });
    expect(comment.wakes).toEqual([{ agentId: agent.id, status: 'delivered' }]);
    expect(await billing()).toMatchObject({ messagesThisMonth: 1, messagesOverage: 0, monthlyTotalCents: 0 });
    await setDelivered(1_000);
    expect(await billing()).toMatchObject({ messagesThisMonth: 1_000, messagesBundlePerMonth: 1_000, messagesHardCeilingPerMonth: 1_000, messagesOverage: 0, messagesOverageCents: 0 });
  });

  it('prices pro overage by tier into the monthly total', async () => {
    await setPlan(t, ada.orgId, 'pro');
    const cases: Array<[delivered: number, overage: number, cents: number]> = [
      [25_000, 0, 0],
      [25_001, 1, 0], // a tenth of a cent
      [26_500, 1_500, 150],
      [35_000, 10_000, 1_000],
      [45_000, 20_000, 1_000 + 500],
      [125_000, 100_000, 1_000 + 4_500],
      [500_000, 475_000, 1_000 + 4_500 + 375 * 25],
    ];
    for (const [delivered, overage, cents] of cases) {
      await setDelivered(delivered);
      expect(await billing(), `${delivered} delivered`).toMatchObject({
        messagesThisMonth: delivered,
        messagesOverage: overage,
        messagesOverageCents: cents,
        monthlyPriceCents: 1_900,
        monthlyTotalCents: 1_900 + cents,
      });
    }
  });

  it('prices scale overage beyond its larger bundle, and a new month starts at zero', async () => {
    await setPlan(t, ada.orgId, 'scale');
    await setDelivered(251_000);
    expect(await billing()).toMatchObject({ messagesBundlePerMonth: 250_000, messagesOverage: 1_000, messagesOverageCents: 100, monthlyTotalCents: 4_900 + 100 });
    clock.set(new Date('2027-04-01T00:00:01Z'));
    expect(await billing()).toMatchObject({ messagesThisMonth: 0, messagesOverage: 0, messagesOverageCents: 0, monthlyTotalCents: 4_900 });
  });
});
