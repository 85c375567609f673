import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payThroughCheckout } from '../billing/helpers';
import { ManualClock, startTestApp, type TestApp } from '../helpers/app';
import { grantTokens } from '../oauth/helpers';
import { insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { bearerOf, checkedClients, refusal, rpcError, type ToolResult } from './helpers';

/**
 * The billing, support and search tools through the SDK's own client: each
 * answers what its REST twin answers, under the same policy and the same
 * budgets, and the plan tools act only once confirmed.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
const clock = new ManualClock(new Date('2027-03-11T00:00:00Z'));
let owner: TestUser;
/** The owner's OAuth grant with `admin`: the only way an MCP client may change a plan (keys are never owners). */
let admin: Client;
let agent: { as: { bearer: string }; agentId: string };
let agentClient: Client;
const clients = checkedClients(() => t);
const client = (bearer: string) => clients.open(bearer);

async function adminClientOf(user: TestUser, scope = 'read write admin', grant: Record<string, string> = { grant_write: 'on', grant_admin: 'on' }) {
  const { tokens } = await grantTokens(t, user.cookie, { scope, grant });
  expect(tokens.scope).toBe(scope);
  return client(tokens.access_token);
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  owner = await signInUser(t, 'owner@mcp-billing.test');
  admin = await adminClientOf(owner);
  agent = (await insertKey(t, owner, { role: 'editor', agentName: 'helper' })) as typeof agent;
  agentClient = await client(bearerOf(agent.as));
});

afterAll(async () => {
  await clients.closeAll();
  await t.close();
  await t.store.dispose();
});

async function call(mcp: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = await mcp.callTool({ name, arguments: args });
  if (!result.isError) expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(result.structuredContent);
  return result;
}

/** The two-step call of a dangerous tool; answers the second result. */
async function confirmed(mcp: Client, name: string, args: Record<string, unknown>) {
  const first = await call(mcp, name, args);
  expect(first.structuredContent).toMatchObject({ status: 'confirmation_required', confirm_token: expect.stringMatching(/^cfm_/), expires_in: 60 });
  return call(mcp, name, { ...args, confirm_token: (first.structuredContent as { confirm_token: string }).confirm_token });
}

const rest = (method: string, path: string, body?: unknown, as: TestUser['as'] = owner.as) => t.request(method, path, { as, body });
const planOf = async (user: TestUser) => (await rest('GET', '/api/billing', undefined, user.as)).body.plan as string;

describe('get_billing', () => {
  it('answers what GET /api/billing answers, for the caller’s organisation or the one `org` names', async () => {
    const viaMcp = (await call(agentClient, 'get_billing', {})).structuredContent as Record<string, unknown>;
    const viaRest = (await rest('GET', '/api/billing', undefined, agent.as)).body;
    // The REST call is one more API call than the tool saw.
    expect(viaRest).toEqual({ ...viaMcp, apiCallsThisMonth: (viaMcp.apiCallsThisMonth as number) + 1 });
    expect(viaMcp).toMatchObject({ plan: 'free', agentCap: 3, activeAgents: 1 });

    const named = (await call(agentClient, 'get_billing', { org: owner.orgSlug })).structuredContent as Record<string, unknown>;
    expect(named.plan).toBe('free');
    const stranger = await signInUser(t, 'stranger@mcp-billing.test');
    expect(refusal(await call(agentClient, 'get_billing', { org: stranger.orgSlug }))).toMatchObject({ error: { code: 'not_found' }, status: 404 });
  });
});

describe('upgrade_plan and downgrade_plan', () => {
  it('act only when repeated with the token; the token works once, only for the same arguments', async () => {
    await payThroughCheckout(t, owner, 'pro');
    expect(await planOf(owner)).toBe('pro');

    const first = await call(admin, 'upgrade_plan', { plan: 'scale' });
    const { confirm_token: token, message } = first.structuredContent as { confirm_token: string; message: string };
    expect(message).toContain(`from the pro plan to scale ($49.00 a month)`);
    expect(await planOf(owner)).toBe('pro');

    // Other arguments: refused, and the token is not used up.
    expect(refusal(await call(admin, 'upgrade_plan', { plan: 'pro', confirm_token: token }))).toMatchObject({ error: { code: 'invalid_confirmation' }, status: 409 });
    expect(refusal(await call(admin, 'upgrade_plan', { plan: 'scale', org: 'another-org', confirm_token: token })).error.code).toBe('invalid_confirmation');
    expect(await planOf(owner)).toBe('pro');

    const switched = await call(admin, 'upgrade_plan', { plan: 'scale', confirm_token: token });
    expect(switched.structuredContent).toEqual({ plan: 'scale', status: 'switched', previousPlan: 'pro', prorationCents: expect.any(Number) });
    expect((switched.structuredContent as { prorationCents: number }).prorationCents).toBeGreaterThan(0);
    expect(await planOf(owner)).toBe('scale');
    // The REST twin answers the same shape for the same request.
    expect((await rest('POST', '/api/billing/upgrade', { plan: 'scale' })).body).toEqual({ plan: 'scale', status: 'switched', previousPlan: 'scale', prorationCents: 0 });

    expect(refusal(await call(admin, 'upgrade_plan', { plan: 'scale', confirm_token: token })).error.code).toBe('invalid_confirmation');
  });

  it('downgrade_plan schedules the move to free, and the REST twin cancels it', async () => {
    const first = await call(admin, 'downgrade_plan', {});
    expect((first.structuredContent as { message: string }).message).toContain('from the scale plan to free at the end of the billing period');
    expect((await rest('GET', '/api/billing')).body.pendingDowngradeAt).toBeNull();
    const scheduled = await call(admin, 'downgrade_plan', { confirm_token: (first.structuredContent as { confirm_token: string }).confirm_token });
    expect(scheduled.structuredContent).toEqual({ plan: 'scale', status: 'scheduled', effectiveAt: '2027-04-01T00:00:00.000Z' });
    expect((await rest('GET', '/api/billing')).body.pendingDowngradeAt).toBe('2027-04-01T00:00:00.000Z');

    const cancel = await call(admin, 'downgrade_plan', {});
    expect((cancel.structuredContent as { message: string }).message).toContain('Cancel the move');
    expect((await rest('POST', '/api/billing/downgrade')).body).toEqual({ plan: 'scale', status: 'canceled', effectiveAt: null });
  });

  it('a caller who may not change the plan is refused at the first call, with no token: an OAuth grant without admin, a key, another organisation', async () => {
    const writeOnly = await adminClientOf(owner, 'read write', { grant_write: 'on' });
    for (const name of ['upgrade_plan', 'downgrade_plan']) {
      const refused = refusal(await call(writeOnly, name, { plan: name === 'upgrade_plan' ? 'pro' : undefined }));
      expect(refused, name).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('"admin" scope') }, status: 403 });
    }
    expect(refusal(await call(agentClient, 'upgrade_plan', { plan: 'pro' }))).toMatchObject({ error: { code: 'forbidden' }, status: 403 });
    const stranger = await signInUser(t, 'other-owner@mcp-billing.test');
    expect(refusal(await call(admin, 'upgrade_plan', { plan: 'pro', org: stranger.orgSlug })).status).toBe(404);
    expect(await planOf(owner)).toBe('scale');
    expect(await planOf(stranger)).toBe('free');
  });

  it('share the budget of 5 upgrades an hour with REST: the 6th, through either, is refused; asking for a token spends nothing', async () => {
    const busy = await signInUser(t, 'busy@mcp-billing.test');
    const busyAdmin = await adminClientOf(busy);
    // Without a card every upgrade answers checkout-required, and each one spends the budget.
    for (let i = 0; i < 2; i++) {
      const res = await rest('POST', '/api/billing/upgrade', { plan: 'pro' }, busy.as);
      expect(res.body.status).toBe('checkout-required');
      // The burst headers report the tightest budget the call spent: the organisation's, not the 300 writes a minute.
      expect(res.headers.get('x-ratelimit-burst-remaining')).toBe(String(4 - i));
    }
    for (let i = 0; i < 4; i++) await call(busyAdmin, 'upgrade_plan', { plan: 'pro' });
    for (let i = 0; i < 3; i++) expect((await confirmed(busyAdmin, 'upgrade_plan', { plan: 'pro' })).structuredContent).toMatchObject({ status: 'checkout-required' });

    const tokenFirst = await call(busyAdmin, 'upgrade_plan', { plan: 'pro' });
    const error = await rpcError(busyAdmin.callTool({ name: 'upgrade_plan', arguments: { plan: 'pro', confirm_token: (tokenFirst.structuredContent as { confirm_token: string }).confirm_token } }));
    expect(error.code).toBe(-32029);
    expect(error.data).toMatchObject({ code: 'rate_limited', endpoint: 'billing_upgrade', limit: 5, window: '1h', retryAfter: expect.any(Number) });
    const used = async () => Number((await rest('GET', '/api/billing', undefined, busy.as)).headers.get('x-ratelimit-monthly-used'));
    const usedBefore = await used();
    const viaRest = await rest('POST', '/api/billing/upgrade', { plan: 'pro' }, busy.as);
    expect(viaRest.status).toBe(429);
    expect(viaRest.body).toMatchObject({ code: 'rate_limited', endpoint: 'billing_upgrade' });
    expect(viaRest.headers.get('x-ratelimit-burst-remaining')).toBe('0');
    expect(Number(viaRest.headers.get('retry-after'))).toBeGreaterThan(0);
    // A 429 is a refusal, not a call: the monthly count does not move (the GET after it is the one counted).
    expect(await used()).toBe(usedBefore + 1);

    // The downgrade budget is its own: free has nothing to downgrade (409 at once, no token), which is not a rate limit.
    expect(refusal(await call(busyAdmin, 'downgrade_plan', {}))).toMatchObject({ error: { code: 'conflict' }, status: 409 });
    // Another organisation's budget is untouched.
    expect((await rest('POST', '/api/billing/upgrade', { plan: 'scale' })).status).toBe(200);
    clock.advance(3600_000 + 1);
    // An hour on, the budget is back (and the access token has expired: a fresh grant).
    expect((await confirmed(await adminClientOf(busy), 'upgrade_plan', { plan: 'pro' })).structuredContent).toMatchObject({ status: 'checkout-required' });
  });
});

describe('request_limit_increase and create_support_ticket', () => {
  it('request_limit_increase answers what the REST route answers', async () => {
    const body = { kind: 'rows', desiredValue: 20_000, reason: 'A bigger import' };
    const viaMcp = (await call(agentClient, 'request_limit_increase', body)).structuredContent as Record<string, unknown>;
    const viaRest = (await rest('POST', '/api/billing/request-limit-increase', body, agent.as)).body;
    expect(viaMcp).toEqual({ ...viaRest, id: expect.any(String) });
    expect(viaMcp.id).not.toBe(viaRest.id);
    expect(viaMcp).toMatchObject({ ...body, status: 'received', plan: 'scale' });
  });

  it('create_support_ticket files a ticket that GET /api/support/{id} shows as the tool answered it', async () => {
    const ticket = (await call(agentClient, 'create_support_ticket', { kind: 'bug', title: 'Export stalls', body: 'At 90 %.', context: { page: '/export' } })).structuredContent as Record<string, any>;
    expect(ticket).toMatchObject({ kind: 'bug', status: 'open', title: 'Export stalls', createdBy: { principalType: 'agent', id: agent.agentId } });
    expect((await rest('GET', `/api/support/${ticket.id}`)).body).toEqual(ticket);
  });

  it('tickets share the budget of 10 an hour per organisation with REST', async () => {
    const team = await signInUser(t, 'team@mcp-billing.test');
    const key = await insertKey(t, team, { role: 'viewer' });
    const teamClient = await client(bearerOf(key.as));
    const ticket = (i: number) => ({ kind: 'question', title: `Question ${i}`, body: 'How?' });
    for (let i = 0; i < 9; i++) expect((await rest('POST', '/api/support', ticket(i), team.as)).status).toBe(200);
    expect((await call(teamClient, 'create_support_ticket', ticket(9))).isError).toBeFalsy();
    const error = await rpcError(teamClient.callTool({ name: 'create_support_ticket', arguments: ticket(10) }));
    expect(error.code).toBe(-32029);
    expect(error.data).toMatchObject({ endpoint: 'support_tickets', limit: 10 });
    expect((await rest('GET', '/api/support', undefined, team.as)).body.tickets).toHaveLength(10);
  });
});

describe('search', () => {
  it('finds a row created through MCP, with the same answer as GET /api/search', async () => {
    const row = (await call(agentClient, 'create_row', { slug: 'welcome', data: { title: 'Quarterly zeppelin review' } })).structuredContent as { id: string };
    const viaMcp = (await call(agentClient, 'search', { q: 'zeppelin' })).structuredContent as Record<string, any>;
    expect(viaMcp.hits).toHaveLength(1);
    expect(viaMcp.hits[0]).toMatchObject({ id: `row:${row.id}`, kind: 'row', title: 'Quarterly zeppelin review', workspace: { slug: 'welcome' } });
    const viaRest = (await rest('GET', '/api/search?q=zeppelin', undefined, agent.as)).body;
    expect(viaRest).toEqual({ ...viaMcp, took: expect.any(Number) });
    const paged = (await call(agentClient, 'search', { q: 'zeppelin', kind: 'workspace', limit: 5 })).structuredContent as Record<string, any>;
    expect(paged).toMatchObject({ hits: [], count: 0 });
  });
});

describe('hostile arguments', () => {
  const rpc = (body: string, bearer: string) =>
    t.request('POST', '/api/mcp', {
      rawBody: body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${bearer}`, 'mcp-protocol-version': '2025-06-18' },
    });

  it('wrong types, unknown fields and out-of-range values are -32602 and change nothing', async () => {
    const admin = await adminClientOf(owner);
    const before = (await rest('GET', '/api/billing')).body;
    for (const [name, args] of [
      ['upgrade_plan', { plan: 'free' }],
      ['upgrade_plan', { plan: ['pro'] }],
      ['upgrade_plan', { plan: 'pro', org: 42 }],
      ['upgrade_plan', { plan: 'pro', confirm_token: '' }],
      ['downgrade_plan', { now: true }],
      ['request_limit_increase', { kind: 'rows', desiredValue: -1, reason: 'x' }],
      ['request_limit_increase', { kind: 'rows', desiredValue: '1e9', reason: 'x' }],
      ['create_support_ticket', { kind: 'bug', title: ' ', body: 'x' }],
      ['create_support_ticket', { kind: 'bug', title: 't', body: 'x', attachmentUrls: ['javascript:alert(1)'] }],
      ['search', { q: { $ne: '' } }],
      ['search', { q: 'x', limit: 1000 }],
      ['get_billing', { org: 'x'.repeat(101) }],
    ] as const) {
      const error = await rpcError(admin.callTool({ name, arguments: args as Record<string, unknown> }));
      expect(error.code, `${name} ${JSON.stringify(args)}`).toBe(-32602);
    }
    const after = (await rest('GET', '/api/billing')).body;
    expect(after).toMatchObject({ plan: before.plan, pendingDowngradeAt: before.pendingDowngradeAt });
  });

  it('a __proto__ key is an unknown argument, and pollutes nothing', async () => {
    const { tokens } = await grantTokens(t, owner.cookie, { scope: 'read write admin', grant: { grant_write: 'on', grant_admin: 'on' } });
    const res = await rpc(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"upgrade_plan","arguments":{"plan":"pro","__proto__":{"plan":"scale","isAdmin":true}}}}',
      tokens.access_token,
    );
    expect(res.status).toBe(200);
    expect(res.body.error.code).toBe(-32602);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    const context = await rpc(
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"create_support_ticket","arguments":{"kind":"bug","title":"proto","body":"b","context":{"__proto__":{"polluted":true}}}}}',
      tokens.access_token,
    );
    expect(context.body.result.isError).toBeFalsy();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Nested, it is data like any other key, kept or dropped exactly as over REST.
    const viaRest = await t.request('POST', '/api/support', { as: owner.as, rawBody: '{"kind":"bug","title":"proto","body":"b","context":{"__proto__":{"polluted":true}}}', headers: { 'content-type': 'application/json' } });
    expect(context.body.result.structuredContent.context).toEqual(viaRest.body.context);
  });

  it('a lone surrogate is repaired to U+FFFD on the way in, as over REST: stored well-formed, never a 500', async () => {
    const ticket = await call(agentClient, 'create_support_ticket', { kind: 'other', title: 'half \ud800 pair', body: 'x\udc00' });
    expect(ticket.structuredContent).toMatchObject({ title: 'half \ufffd pair', body: 'x\ufffd' });
    const found = await call(agentClient, 'search', { q: '\ud800' });
    expect(found.isError).toBeFalsy();
  });
});
