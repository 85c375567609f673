import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestApp, type TestApp, type TestResponse } from '../helpers/app';
import { mcpClient } from '../oauth/helpers';
import { bearerOf, rpcError } from '../mcp/helpers';
import { elevate, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Issue 22 item 2. SPEC: caps gate writes only. At the monthly API-call cap
 * reads keep answering (counted, with the monthly headers), writes get 402,
 * and the way out (billing: summary, upgrade, checkout, portal, limit
 * increase) and the web app's sign-in and settings keep working.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
const clock = new ManualClock(new Date('2027-05-31T23:00:00Z'));
let owner: TestUser;
let key: Awaited<ReturnType<typeof insertKey>>;

const used = (res: TestResponse) => Number(res.headers.get('x-ratelimit-monthly-used'));

beforeAll(async () => {
  t = await startTestApp({ clock });
  owner = await signInUser(t, 'capped-owner@billing.test');
  key = await insertKey(t, owner, { role: 'editor', agentName: 'capped-agent' });
  const row = await t.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: 'before the cap' } } });
  expect(row.status).toBe(200);
  await elevate(t, owner, 'keys');
  // The stored total is read the first time the organisation is seen in a month: June starts at the cap.
  await t.services.db.insertInto('apiUsage').values({ orgId: owner.orgId, period: '2027-06', calls: 10_000 }).execute();
  clock.set(new Date('2027-06-01T00:30:00Z'));
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('at the monthly API-call cap', () => {
  it('reads keep answering, counted and with the monthly headers', async () => {
    const start = used(await t.request('GET', '/api/billing', { as: owner.as }));
    expect(start).toBeGreaterThanOrEqual(10_000);
    const reads = ['/api/keys', '/api/me/org', '/api/workspaces', '/api/workspaces/welcome/rows', '/api/workspaces/welcome/events', '/api/billing'];
    let previous = start;
    for (const path of reads) {
      const res = await t.request('GET', path, { as: owner.as });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('x-ratelimit-monthly-cap'), path).toBe('10000');
      expect(used(res), path).toBe(previous + 1);
      previous = used(res);
    }
    // An API key reads too.
    const viaKey = await t.request('GET', '/api/workspaces/welcome/rows', { as: key.as });
    expect(viaKey.status).toBe(200);
    expect(used(viaKey)).toBe(previous + 1);
  });

  it('writes get 402 over_limit pointing at the upgrade, which itself answers', async () => {
    const refused = await t.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: 'over the cap' } } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'over_limit', limit: 'api_calls', cap: 10_000, details: { upgrade: { api: 'POST /api/billing/upgrade' } } });
    expect(refused.headers.get('x-ratelimit-monthly-used')).not.toBeNull();
    expect((await t.request('PATCH', '/api/workspaces/welcome', { as: key.as, body: { name: 'Renamed' } })).status).toBe(402);

    const upgrade = await t.request('POST', '/api/billing/upgrade', { as: owner.as, body: { plan: 'pro' } });
    expect(upgrade.status).toBe(200);
    expect(upgrade.body).toMatchObject({ status: 'checkout-required', plan: 'pro' });
    const checkout = await t.request('POST', '/api/billing/checkout', { as: owner.as, body: { plan: 'pro' } });
    expect(checkout.status).toBe(200);
    expect(checkout.body.url).toEqual(expect.any(String));
    expect((await fetch(checkout.body.url)).status).toBe(200);
    const increase = await t.request('POST', '/api/billing/request-limit-increase', { as: owner.as, body: { kind: 'other', desiredValue: 50_000, reason: 'A busy month' } });
    expect(increase.status).toBe(200);
  });

  it('the web app signs in and its settings save', async () => {
    const again = await signInUser(t, owner.email);
    expect((await t.request('PATCH', '/api/me', { as: again.as, body: { name: 'Still here' } })).status).toBe(200);
    expect((await t.request('PATCH', '/api/me/org', { as: again.as, body: { name: 'Capped Org' } })).status).toBe(200);
    expect((await t.request('DELETE', `/api/keys/key_${key.agentId}`, { as: again.as })).status).toBe(200);
    expect((await t.request('POST', '/api/billing/portal', { as: again.as })).status).toBe(200);
  });

  it('over MCP: read tools and the billing tools answer, write tools get -32015', async () => {
    const agent = await insertKey(t, owner, { role: 'editor', agentName: 'capped-mcp' });
    const client = await mcpClient(t, bearerOf(agent.as));
    const list = await client.callTool({ name: 'list_rows', arguments: { slug: 'welcome' } });
    expect(list.isError).toBeFalsy();
    expect((await client.callTool({ name: 'get_billing', arguments: {} })).isError).toBeFalsy();
    const write = await rpcError(client.callTool({ name: 'create_row', arguments: { slug: 'welcome', data: { title: 'no' } } }));
    expect(write.code).toBe(-32015);
    const increase = await client.callTool({ name: 'request_limit_increase', arguments: { kind: 'other', desiredValue: 50_000, reason: 'From the agent' } });
    expect(increase.isError).toBeFalsy();
    await client.close();
  });
});
