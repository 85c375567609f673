import { expect } from 'vitest';
import * as Y from 'yjs';
import { switchPlan } from '../../src/domain/billing';
import { randomToken } from '../../src/lib/secrets';
import { writeSnapshot } from '../../src/persistence/documents';
import { replaceRowProjections } from '../../src/persistence/table-rows';
import type { PlanName } from '../../src/persistence/schema';
import { tablesDocumentName } from '../../src/model/document-names';
import { ensureSheet, insertRows, scaffoldDefaultColumns } from '../../src/model/table/document';
import type { TestApp } from '../helpers/app';
import type { TestUser } from '../workspaces/helpers';

const uid = () => randomToken(9).replace(/[^a-zA-Z0-9]/g, 'x');

/** What a browser does with a page's form: read its action and submit the fields, form-encoded, without following the redirect. */
export async function submitForm(pageUrl: string, html: string, fields: Record<string, string>) {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error('no form on the page');
  const target = new URL(action.replace(/&amp;/g, '&'), pageUrl).toString();
  const names = [...html.matchAll(/<input[^>]* name="([^"]+)"/g)].map((m) => m[1]!);
  expect(Object.keys(fields).every((f) => names.includes(f))).toBe(true);
  return fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

export const TEST_CARD = { name: 'Ada Lovelace', number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };

/** Upgrade without a card on file: follow the checkout URL and pay with a test card, as a person would. */
export async function payThroughCheckout(t: TestApp, user: TestUser, plan: 'pro' | 'scale') {
  const upgrade = await t.request('POST', '/api/billing/upgrade', { as: user.as, body: { plan } });
  expect(upgrade.body).toMatchObject({ status: 'checkout-required', plan });
  const page = await fetch(upgrade.body.checkoutUrl);
  expect(page.status).toBe(200);
  const submitted = await submitForm(upgrade.body.checkoutUrl, await page.text(), TEST_CARD);
  expect(submitted.status).toBe(303);
  return upgrade.body.checkoutUrl as string;
}

/** The operator's way (admin CLI `set-plan`), for tests about caps rather than payments. */
export async function setPlan(t: TestApp, orgId: string, plan: PlanName) {
  await switchPlan(t.services, orgId, plan, { principal: null, reason: 'operator' });
}

// Filling an organisation up to a cap quickly. These write what the create
// paths would have written; the boundary itself is always crossed through the API.

export async function addWorkspaces(t: TestApp, owner: TestUser, count: number): Promise<Array<{ id: string; slug: string }>> {
  if (count <= 0) return [];
  const rows = Array.from({ length: count }, (_, i) => ({
    id: `ws_fill${uid()}`,
    orgId: owner.orgId,
    slug: `filler-${i}-${uid().toLowerCase().replace(/[^a-z0-9]/g, '')}`,
    name: `Filler ${i}`,
    mode: 'table' as const,
    visibility: 'private' as const,
    createdById: owner.userId,
    createdByType: 'user' as const,
  }));
  for (let from = 0; from < rows.length; from += 500) await t.services.db.insertInto('workspaces').values(rows.slice(from, from + 500)).execute();
  for (let from = 0; from < rows.length; from += 500) {
    await t.services.db
      .insertInto('memberships')
      .values(rows.slice(from, from + 500).map((w) => ({ workspaceId: w.id, principalId: owner.userId, principalType: 'user' as const, role: 'owner' as const, viaUserId: null })))
      .execute();
  }
  return rows.map(({ id, slug }) => ({ id, slug }));
}

/** New users; with `orgId` they become members of that organisation. */
export async function addUsers(t: TestApp, count: number, options: { orgId?: string; workspaceId?: string } = {}): Promise<string[]> {
  if (count <= 0) return [];
  const ids = Array.from({ length: count }, () => `usr_fill${uid()}`);
  await t.services.db.insertInto('principals').values(ids.map((id) => ({ id, kind: 'user' as const, name: id, avatarUrl: null }))).execute();
  await t.services.db.insertInto('users').values(ids.map((id) => ({ id, email: `${id.toLowerCase()}@fill.test`, primaryOrgId: null }))).execute();
  if (options.orgId) {
    await t.services.db.insertInto('orgMembers').values(ids.map((userId) => ({ orgId: options.orgId!, userId, role: 'viewer' as const }))).execute();
  }
  if (options.workspaceId) {
    await t.services.db
      .insertInto('memberships')
      .values(ids.map((id) => ({ workspaceId: options.workspaceId!, principalId: id, principalType: 'user' as const, role: 'viewer' as const, viaUserId: null })))
      .execute();
  }
  return ids;
}

/** Agents of `owner`, each holding one live key. */
export async function addAgentsWithKeys(t: TestApp, owner: TestUser, count: number): Promise<Array<{ agentId: string; keyId: string }>> {
  if (count <= 0) return [];
  const agents = Array.from({ length: count }, () => ({ agentId: `agt_fill${uid()}`, keyId: `key_fill${uid()}` }));
  const db = t.services.db;
  await db.insertInto('principals').values(agents.map((a) => ({ id: a.agentId, kind: 'agent' as const, name: a.agentId, avatarUrl: null }))).execute();
  await db.insertInto('agents').values(agents.map((a) => ({ id: a.agentId, orgId: owner.orgId, ownerUserId: owner.userId, modelHint: null }))).execute();
  await db
    .insertInto('apiKeys')
    .values(
      agents.map((a) => ({
        id: a.keyId,
        orgId: owner.orgId,
        agentId: a.agentId,
        ownerUserId: owner.userId,
        name: 'filler',
        prefix: 'svc_live_fil',
        secretHash: `hash-${a.keyId}`,
        scopeWorkspaceId: null,
        role: 'viewer' as const,
      })),
    )
    .execute();
  return agents;
}

/**
 * A table workspace whose document already holds `count` rows, written to
 * its stored snapshot before the document is first opened (as if it had
 * been filled long ago), so a 50,000-row table costs seconds, not minutes.
 */
export async function addWorkspaceWithRows(t: TestApp, owner: TestUser, slug: string, count: number): Promise<{ id: string; surfaceId: string; rowIds: string[] }> {
  const [workspace] = await addWorkspaces(t, owner, 1);
  await t.services.db.updateTable('workspaces').set({ slug, name: slug }).where('id', '=', workspace!.id).execute();
  const surfaceId = `sf_fill${uid()}`;
  await t.services.db.insertInto('surfaces').values({ id: surfaceId, workspaceId: workspace!.id, slug: 'table', kind: 'table', name: 'Table', position: 0 }).execute();
  const doc = new Y.Doc();
  ensureSheet(doc, surfaceId, null);
  scaffoldDefaultColumns(doc, surfaceId, null);
  // Ids of its own: the row projection keys rows by id alone, across workspaces.
  const prefix = `r${uid()}`;
  const rows = Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, surfaceId, data: { title: `row ${i}` } }));
  insertRows(doc, rows, null);
  // As a compacted snapshot: loading it is what a long-lived table costs, without a compaction on first write.
  if ((await writeSnapshot(t.services.db, tablesDocumentName(workspace!.id), Y.encodeStateAsUpdateV2(doc), 0, 0, new Date())) === null) throw new Error('the table already had a snapshot');
  // And in the row projection, as the commits that made them would have left them: REST shows rows once they are there.
  await replaceRowProjections(t.services.db, workspace!.id, rows.map((row, position) => ({ ...row, position })), new Date());
  doc.destroy();
  return { id: workspace!.id, surfaceId, rowIds: rows.map((row) => row.id) };
}
