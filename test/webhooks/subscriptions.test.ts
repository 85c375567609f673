import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOKS_PER_ORG } from '../../src/domain/webhooks';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, addOrgMember, createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Managing subscriptions: validation, the secret shown once and kept
 * encrypted, who may manage them (the policy's `manage_webhooks`), and the
 * events that record changes. Targets are on loopback (allowed here) on a
 * port nobody listens on, subscribed to an event these tests never cause.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let owner: TestUser;
const TARGET = 'http://127.0.0.1:9/hook';
const QUIET = ['doc.mention_added'];

beforeAll(async () => {
  t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  owner = await signInUser(t, 'hooks-owner@example.com');
});
afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

const orgHooks = () => `/api/orgs/${owner.orgSlug}/webhooks`;

describe('webhook subscriptions', { timeout: 240_000 }, () => {
  it('returns the secret once, never lists it, and keeps it encrypted at rest', async () => {
    const created = await t.request('POST', orgHooks(), { as: owner.as, body: { url: TARGET, events: ['row.*', 'row.created', '*'] } });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ url: TARGET, events: ['*', 'row.*', 'row.created'], active: true, workspace: null, failingSince: null, deactivatedAt: null });
    expect(created.body.createdBy).toMatchObject({ principalType: 'user', id: owner.userId });
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);

    const listed = await t.request('GET', orgHooks(), { as: owner.as });
    expect(listed.body.webhooks).toHaveLength(1);
    expect(listed.body.webhooks[0]).not.toHaveProperty('secret');
    const one = await t.request('GET', `${orgHooks()}/${created.body.id}`, { as: owner.as });
    expect(one.body).not.toHaveProperty('secret');
    expect(one.text).not.toContain(secret.slice(6));

    const stored = await t.services.db.selectFrom('webhooks').select('secretCiphertext').where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(stored.secretCiphertext).not.toContain(secret.slice(6));
    expect(stored.secretCiphertext).toMatch(/^v1\./);
    expect(t.services.webhooks.secrets.open(stored.secretCiphertext)).toBe(secret);

    // The creator's data export lists it, without the secret.
    const exported = await t.request('GET', '/api/me/export', { as: owner.as });
    expect(exported.status).toBe(200);
    expect(exported.body.webhooks).toEqual([expect.objectContaining({ id: created.body.id, url: TARGET, events: ['*', 'row.*', 'row.created'] })]);
    expect(exported.text).not.toContain(secret.slice(6));
    expect(exported.text).not.toContain(stored.secretCiphertext);

    expect((await t.request('DELETE', `${orgHooks()}/${created.body.id}`, { as: owner.as })).status).toBe(200);
    expect((await t.request('GET', `${orgHooks()}/${created.body.id}`, { as: owner.as })).status).toBe(404);
    expect((await t.request('DELETE', `${orgHooks()}/${created.body.id}`, { as: owner.as })).status).toBe(404);
  });

  it('refuses what is not an absolute http(s) URL or a known event, and writes nothing', async () => {
    const cases: Array<[unknown, number, string[]?]> = [
      [{ url: 'ftp://127.0.0.1/x', events: QUIET }, 422, ['url']],
      [{ url: 'not a url', events: QUIET }, 422, ['url']],
      [{ url: '/relative/path', events: QUIET }, 422, ['url']],
      [{ url: 'javascript:alert(1)', events: QUIET }, 422, ['url']],
      [{ url: 'http://user:pass@127.0.0.1:9/x', events: QUIET }, 422, ['url']],
      [{ url: `http://127.0.0.1:9/${'a'.repeat(2100)}`, events: QUIET }, 422, ['url']],
      [{ url: 5, events: QUIET }, 400, ['url']],
      [{ url: TARGET, events: [] }, 422, ['events']],
      [{ url: TARGET, events: ['row.created', 'row.exploded'] }, 422, ['events', '1']],
      [{ url: TARGET, events: ['nope.*'] }, 422, ['events', '0']],
      [{ url: TARGET, events: ['\ud800'] }, 422, ['events', '0']],
      [{ url: TARGET, events: 'row.created' }, 400, ['events']],
      [{ url: TARGET }, 400, ['events']],
      [{ url: TARGET, events: QUIET, secret: 'mine' }, 400, ['secret']],
      [JSON.parse('{"url":"http://127.0.0.1:9/x","events":["row.created"],"__proto__":{"admin":true}}'), 400, ['__proto__']],
    ];
    for (const [body, status, path] of cases) {
      const res = await t.request('POST', orgHooks(), { as: owner.as, body });
      expect(res.status, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`).toBe(status);
      if (path) expect(res.body.error.details.map((d: any) => d.path), res.text).toContainEqual(path);
    }
    expect((await t.request('POST', orgHooks(), { as: owner.as, rawBody: '{"url":' })).status).toBe(400);
    expect((await t.request('GET', orgHooks(), { as: owner.as })).body.webhooks).toEqual([]);
  });

  it('changes url, events and active with PATCH, validating the same way', async () => {
    const created = (await t.request('POST', orgHooks(), { as: owner.as, body: { url: TARGET, events: QUIET } })).body;
    const patched = await t.request('PATCH', `${orgHooks()}/${created.id}`, { as: owner.as, body: { url: 'http://127.0.0.1:9/other', events: ['workspace.*'] } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ url: 'http://127.0.0.1:9/other', events: ['workspace.*'], active: true });
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect((await t.request('PATCH', `${orgHooks()}/${created.id}`, { as: owner.as, body: { events: ['row.sealed'] } })).status).toBe(422);
    expect((await t.request('PATCH', `${orgHooks()}/${created.id}`, { as: owner.as, body: { url: 'gopher://x' } })).status).toBe(422);
    expect((await t.request('PATCH', `${orgHooks()}/${created.id}`, { as: owner.as, body: { active: 'no' } })).status).toBe(400);
    expect((await t.request('PATCH', `${orgHooks()}/whk_missing`, { as: owner.as, body: { active: false } })).status).toBe(404);
    const unchanged = await t.request('PATCH', `${orgHooks()}/${created.id}`, { as: owner.as, body: {} });
    expect(unchanged.body).toMatchObject({ url: 'http://127.0.0.1:9/other', events: ['workspace.*'] });
    expect((await t.request('GET', `${orgHooks()}/${created.id}/deliveries`, { as: owner.as })).body).toEqual({ deliveries: [], nextCursor: null });
    expect((await t.request('GET', `${orgHooks()}/${created.id}/deliveries?status=lost`, { as: owner.as })).status).toBe(400);
    expect((await t.request('GET', `${orgHooks()}/whk_missing/deliveries`, { as: owner.as })).status).toBe(404);
    await t.request('DELETE', `${orgHooks()}/${created.id}`, { as: owner.as });
  });

  it('lets org owners and editors manage org webhooks; others get 403, strangers and anonymous 404 and 401', async () => {
    const editor = await signInUser(t, 'hooks-editor@example.com');
    const viewer = await signInUser(t, 'hooks-viewer@example.com');
    const stranger = await signInUser(t, 'hooks-stranger@example.com');
    await addOrgMember(t, owner.orgId, editor.userId, 'editor');
    await addOrgMember(t, owner.orgId, viewer.userId, 'viewer');
    const body = { url: TARGET, events: QUIET };

    const byEditor = await t.request('POST', orgHooks(), { as: editor.as, body });
    expect(byEditor.status, byEditor.text).toBe(200);
    expect((await t.request('GET', orgHooks(), { as: viewer.as })).status).toBe(403);
    expect((await t.request('POST', orgHooks(), { as: viewer.as, body })).status).toBe(403);
    expect((await t.request('DELETE', `${orgHooks()}/${byEditor.body.id}`, { as: viewer.as })).status).toBe(403);
    expect((await t.request('GET', orgHooks(), { as: stranger.as })).status).toBe(404);
    expect((await t.request('POST', orgHooks(), { as: stranger.as, body })).status).toBe(404);
    expect((await t.request('GET', orgHooks())).status).toBe(401);
    expect((await t.request('POST', orgHooks(), { body })).status).toBe(401);

    // An unscoped key acts with its owner's org role capped by the key's; a workspace-scoped key has no org reach.
    const editorKey = await insertKey(t, owner, { role: 'editor' });
    const viewerKey = await insertKey(t, owner, { role: 'viewer' });
    expect((await t.request('GET', orgHooks(), { as: editorKey.as })).status).toBe(200);
    expect((await t.request('GET', orgHooks(), { as: viewerKey.as })).status).toBe(403);
    const scoped = await insertKey(t, owner, { role: 'editor', scopeWorkspaceId: (await t.request('GET', '/api/workspaces/welcome', { as: owner.as })).body.id });
    expect((await t.request('GET', orgHooks(), { as: scoped.as })).status).toBe(404);
    await t.request('DELETE', `${orgHooks()}/${byEditor.body.id}`, { as: owner.as });
  });

  it('lets workspace editors manage the workspace form; viewers get 403 and non-members 404', async () => {
    const ws = await createWorkspace(t, owner, { name: 'Hooked', slug: 'hooked' });
    const editor = await signInUser(t, 'ws-hooks-editor@example.com');
    const viewer = await signInUser(t, 'ws-hooks-viewer@example.com');
    const stranger = await signInUser(t, 'ws-hooks-stranger@example.com');
    await addMembership(t, ws.id, editor.userId, 'editor');
    await addMembership(t, ws.id, viewer.userId, 'viewer');
    const path = `/api/orgs/${owner.orgSlug}/workspaces/hooked/webhooks`;
    const body = { url: TARGET, events: QUIET };

    const created = await t.request('POST', path, { as: editor.as, body });
    expect(created.status, created.text).toBe(200);
    expect(created.body.workspace).toEqual({ id: ws.id, slug: 'hooked' });
    expect((await t.request('GET', path, { as: viewer.as })).status).toBe(403);
    expect((await t.request('POST', path, { as: viewer.as, body })).status).toBe(403);
    expect((await t.request('GET', path, { as: stranger.as })).status).toBe(404);
    expect((await t.request('POST', '/api/workspaces/hooked/webhooks', { body })).status).toBe(401);
    // A workspace webhook is not addressable through the org form, nor the other way round.
    expect((await t.request('GET', `${orgHooks()}/${created.body.id}`, { as: owner.as })).status).toBe(404);

    // Its changes are in the workspace's audit log, with the target's host but never its URL.
    const audit = await t.request('GET', '/api/workspaces/hooked/events?action=webhook.created', { as: viewer.as });
    expect(audit.body.events).toHaveLength(1);
    expect(audit.body.events[0].data).toMatchObject({ webhookId: created.body.id, host: '127.0.0.1:9', events: QUIET, active: true });
    expect(JSON.stringify(audit.body.events[0])).not.toContain('/hook');
    expect((await t.request('DELETE', `${path}/${created.body.id}`, { as: editor.as })).status).toBe(200);
    const deleted = await t.request('GET', '/api/workspaces/hooked/events?action=webhook.deleted', { as: owner.as });
    expect(deleted.body.events[0].principal.id).toBe(editor.userId);
  });

  it(`allows at most ${MAX_WEBHOOKS_PER_ORG} webhooks per organisation`, async () => {
    const crowded = await signInUser(t, 'crowded@example.com');
    const path = `/api/orgs/${crowded.orgSlug}/webhooks`;
    for (let i = 0; i < MAX_WEBHOOKS_PER_ORG; i++) {
      const res = await t.request('POST', path, { as: crowded.as, body: { url: `${TARGET}/${i}`, events: QUIET } });
      expect(res.status, res.text).toBe(200);
    }
    const over = await t.request('POST', '/api/workspaces/welcome/webhooks', { as: crowded.as, body: { url: TARGET, events: QUIET } });
    expect(over.status).toBe(409);
    expect((await t.request('GET', path, { as: crowded.as })).body.webhooks).toHaveLength(MAX_WEBHOOKS_PER_ORG);
  });
});
