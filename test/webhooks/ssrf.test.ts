import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forbiddenAddressReason } from '../../src/webhooks/address-guard';
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually } from '../helpers/sync';
import { signInUser, type TestUser } from '../workspaces/helpers';
import { insertWebhookBehindTheApp, Receiver } from './receiver';

/**
 * SSRF: without WEBHOOK_ALLOW_PRIVATE, targets on loopback, private,
 * link-local (cloud metadata), multicast or unspecified addresses are
 * refused when the subscription is created, and again when a delivery is
 * attempted (a name can resolve elsewhere later). No request in this file
 * leaves the machine: refused targets are never connected to, and the one
 * receiver is on loopback.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let user: TestUser;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp();
  user = await signInUser(t, 'ssrf@example.com');
  receiver = await Receiver.start();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await t?.store.dispose();
});

describe('SSRF protection', { timeout: 240_000 }, () => {
  it('refuses internal targets at creation: 127.0.0.1, 10.0.0.1, 169.254.169.254, [::1], localhost and their disguises', async () => {
    const targets = [
      'http://127.0.0.1/hook',
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/hook',
      'http://localhost:8080/hook',
      'https://LOCALHOST./hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::ffff:a9fe:a9fe]/hook',
      'http://0.0.0.0/hook',
      'http://2130706433/hook',
      'http://0x7f.1/hook',
      'http://192.168.1.10/hook',
      'http://172.16.5.4/hook',
      'http://100.100.100.200/hook',
      'http://[fd00:ec2::254]/hook',
      'http://[fe80::1]/hook',
      'http://224.0.0.1/hook',
    ];
    for (const url of targets) {
      for (const path of [`/api/orgs/${user.orgSlug}/webhooks`, '/api/workspaces/welcome/webhooks']) {
        const res = await t.request('POST', path, { as: user.as, body: { url, events: ['row.created'] } });
        expect(res.status, `${url}: ${res.text}`).toBe(422);
        expect(res.body.error.details[0].path).toEqual(['url']);
        // `localhost.` may not resolve at all here (no DNS): refused as unresolvable rather than as loopback.
        expect(res.body.error.details[0].code, url).toBe(url.includes('LOCALHOST.') && res.body.error.details[0].code === 'unresolvable_host' ? 'unresolvable_host' : 'forbidden_address');
      }
    }
    const patchTarget = await t.services.db.selectFrom('webhooks').select('id').executeTakeFirst();
    expect(patchTarget).toBeUndefined();
    expect((await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks`, { as: user.as })).body.webhooks).toEqual([]);
  });

  it('classifies addresses: only public unicast may be a target (v4, v6, v4-mapped v6)', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(forbiddenAddressReason(address), address).toBeNull();
    const refused = {
      '127.0.0.1': /loopback/,
      '127.255.0.9': /loopback/,
      '::1': /loopback/,
      '::ffff:127.0.0.1': /loopback/,
      '10.0.0.1': /private/,
      '172.31.255.255': /private/,
      '192.168.0.1': /private/,
      'fd12:3456::1': /private/,
      '169.254.169.254': /link-local/,
      'fe80::1': /link-local/,
      '::ffff:169.254.169.254': /link-local/,
      '100.64.0.1': /carrier-grade/,
      '224.0.0.251': /multicast/,
      'ff02::1': /multicast/,
      '0.0.0.0': /unspecified/,
      '::': /unspecified/,
      '255.255.255.255': /broadcast/,
      '192.0.2.1': /reserved/,
      '2001:db8::1': /reserved/,
      '64:ff9b::7f00:1': /reserved/,
      '2002:7f00:1::1': /reserved/,
      '::7f00:1': /./,
    };
    for (const [address, reason] of Object.entries(refused)) expect(forbiddenAddressReason(address), address).toMatch(reason);
  });

  it('checks again at each delivery: a stored target that is internal is never connected to', async () => {
    // As if the name had resolved to a public address at creation and to loopback now: the row is written directly.
    const id = await insertWebhookBehindTheApp(t, user, { url: receiver.url.replace('127.0.0.1', 'localhost') + '/rebound', events: ['row.created'] });
    t.services.webhooks.outbox.invalidate(user.orgId);
    const row = await t.request('POST', '/api/workspaces/welcome/rows', { as: user.as, body: { data: { title: 'not for internal eyes' } } });
    expect(row.status).toBe(200);

    const [delivery] = await eventually(async () => {
      const res = await t.request('GET', `/api/orgs/${user.orgSlug}/webhooks/${id}/deliveries`, { as: user.as });
      return res.body.deliveries[0]?.attempts >= 1 ? res.body.deliveries : null;
    }, 20_000);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, responseStatus: null });
    expect(delivery.error).toBe('Webhook targets must be public: localhost resolves to a loopback address.');
    // The internal address itself is never shown.
    expect(delivery.error).not.toMatch(/127\.0\.0\.1|::1/);
    expect(receiver.received).toEqual([]);

    const retried = await t.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`, { as: user.as });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'pending', attempts: 2 });
    expect(retried.body.error).toMatch(/loopback/);
    expect(receiver.received).toEqual([]);
  });
});
