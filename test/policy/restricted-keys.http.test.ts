import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { ManualClock, startTestApp, type Credential, type TestResponse } from '../helpers/app';
import { postMultipart, proxyUpload, zipOf, type Part } from '../files/helpers';
import { bearerOf, checkedClients, refusal, type ToolResult } from '../mcp/helpers';
import { addMember } from '../keys/fixtures';
import { seedAgent, seedKey } from '../members/fixtures';
import { grantTokens } from '../oauth/helpers';
import { addMembership, addOrgMember, createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * What a restricted key may do is a list, and everything else is refused
 * (issue 33 item 2): every write operation of /openapi.json is sent, with
 * valid parameters on real targets so that the policy and not validation
 * decides, by four keys of one owner (the organisation's owner, who may do
 * everything):
 *
 * - a suggest-only editor key, unscoped and scoped to the workspace: it
 *   reads, suggests and comments (docs/SUGGESTIONS.md, "Suggest-only keys"),
 *   nothing else, in the workspace or in the organisation;
 * - a viewer key, unscoped and scoped: it reads (and pins where the agent
 *   has a membership row), and in the organisation it reads and asks
 *   support (docs/ACCESS.md).
 *
 * The lists below are written from those documents, not from src/policy. A
 * refusal is 403, or 404 where the target is invisible to the key (a key
 * scoped to one workspace reaches no organisation). An operation of
 * /openapi.json without a probe here fails the test: a new operation joins
 * with a decision about who may call it.
 */

type KeyName = 'suggest-only' | 'suggest-only scoped' | 'viewer' | 'viewer scoped';
const KEYS: KeyName[] = ['suggest-only', 'suggest-only scoped', 'viewer', 'viewer scoped'];
const SUGGESTERS: KeyName[] = ['suggest-only', 'suggest-only scoped'];
const UNSCOPED_VIEWER: KeyName[] = ['viewer'];

/** Where an operation acts: a workspace (or something in one), the organisation, or the caller's own account. */
type Reach = 'workspace' | 'org' | 'account';

/** What no probe changes (targets a probe may change or delete are made fresh for it: see `fresh`). */
type Fixture = {
  slug: string;
  workspaceId: string;
  orgSlug: string;
  tableSurface: string;
  columns: unknown[];
  fileId: string;
  webhookId: string;
  deliveryId: string;
  orgWebhookId: string;
  versionId: string;
  suggestionId: string;
  memberId: string;
  orgMemberId: string;
  otherKeyId: string;
};

type Context = { f: Fixture; key: KeyName; as: Credential };

type Probe = {
  /** The operation as /openapi.json names it; a workspace path is also probed under /api/orgs/{orgSlug}. */
  op: string;
  /** A second probe of the same operation (the suggestion form of a write). */
  variant?: string;
  reach: Reach;
  /** Path parameters beyond the fixture's (a fresh row or comment for operations that use one up). */
  params?: (c: Context) => Promise<Record<string, string>> | Record<string, string>;
  query?: (c: Context, params: Record<string, string>) => Record<string, string>;
  body?: (c: Context, params: Record<string, string>) => unknown;
  multipart?: (c: Context) => Promise<Part[]> | Part[];
  /** The keys that may take it; every other key is refused. */
  allowed?: readonly KeyName[];
  allowedStatus?: number;
};

/**
 * Operations no key acts through, left out with the reason: they are open
 * to anyone (their own token or none is the credential), or the MCP
 * transport, whose tools are the operations below (probed over MCP in the
 * last test).
 */
const NOT_KEY_OPERATIONS: Record<string, string> = {
  'POST /api/admin/backup': 'the admin token is its credential',
  'POST /api/auth': 'asks for a sign-in link: open to anyone',
  'POST /api/waitlist': 'open to anyone',
  'POST /api/referrals/click': 'open to anyone',
  'PUT /api/file-uploads/{uploadId}': 'the one-shot upload token in the URL is its credential',
  'POST /billing/checkout/{token}': 'the checkout token is its credential',
  'POST /billing/portal/{token}': 'the portal token is its credential',
  'POST /oauth/authorize': 'OAuth consent: a person in a browser',
  'POST /oauth/register': 'OAuth client registration: open to anyone',
  'POST /oauth/revoke': 'the OAuth token is its credential',
  'POST /oauth/sign-in': 'OAuth sign-in page: open to anyone',
  'POST /oauth/token': 'the OAuth code or refresh token is its credential',
  'POST /api/mcp': 'the MCP transport: its tools are probed below',
  'POST /forms/{token}': 'a public form: its link is the credential, and opens that form only',
  'POST /api/forms/{token}': 'a public form: its link is the credential, and opens that form only',
  'DELETE /api/mcp': 'the MCP transport (stateless: 405)',
};

let t: Awaited<ReturnType<typeof startTestApp>>;
const clock = new ManualClock();
let ada: TestUser;
let f: Fixture;
const keys = {} as Record<KeyName, { as: Credential; agentId: string }>;
let unique = 0;
const next = () => `${++unique}`;

const ws = (c: Context) => `/api/workspaces/${c.f.slug}`;
function ok(res: TestResponse, status = 200) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.body;
}

const made = async (res: Promise<TestResponse>, status = 200) => ok(await res, status);
const asAda = (method: string, url: string, body?: unknown) => made(t.request(method, url, { as: ada.as, ...(body !== undefined ? { body } : {}) }));

/** Targets made by ada for the probe that changes or deletes them, so that no request depends on what an earlier one did. */
const fresh = {
  row: async (c: Context) => ({ id: (await asAda('POST', `${ws(c)}/rows`, { data: { title: `row ${next()}` } })).id as string }),
  /** A comment the key may act on as its author when it may comment, else one of ada's; with a reaction of its author's. */
  comment: async (c: Context) => {
    const author = SUGGESTERS.includes(c.key) ? c.as : ada.as;
    const comment = await made(t.request('POST', `${ws(c)}/comments`, { as: author, body: { target: { type: 'workspace' }, body: `comment ${next()}` } }));
    await made(t.request('POST', `/api/comments/${comment.id}/reactions`, { as: author, body: { emoji: '👍' } }));
    return { id: comment.id as string, emoji: '👍' };
  },
  page: async (c: Context) => {
    const slug = `page-${next()}`;
    await asAda('POST', `${ws(c)}/surfaces`, { kind: 'html', slug, name: 'Page' });
    return { surfaceSlug: slug };
  },
  view: async (c: Context) => ({ id: (await asAda('POST', `${ws(c)}/views`, { name: `view ${next()}` })).view.id as string }),
  webhook: async (c: Context) => ({ id: (await asAda('POST', `${ws(c)}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['row.created'] })).id as string }),
  orgWebhook: async (c: Context) => ({ id: (await asAda('POST', `/api/orgs/${c.f.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/org', events: ['row.created'] })).id as string }),
  invite: async (c: Context) => ({ id: (await asAda('POST', `/api/orgs/${c.f.orgSlug}/invites`, { email: `invitee-${next()}@keys.test`, role: 'viewer' })).id as string }),
  folder: async (c: Context) => ({ folderId: (await asAda('POST', `${ws(c)}/files/folders`, { surfaceSlug: 'files', name: `folder ${next()}` })).id as string }),
  file: async (c: Context) => {
    const file = await proxyUpload(t, `${ws(c)}/files`, ada.as, { bytes: new TextEncoder().encode('hello\n'), name: `file-${next()}.txt`, type: 'text/plain' });
    return { fileId: ok(file).id as string };
  },
  share: async (c: Context) => {
    const { fileId } = await fresh.file(c);
    return { fileId, tokenId: (await asAda('POST', `${ws(c)}/files/${fileId}/share`)).id as string };
  },
  upload: async (c: Context) => ({
    uploadId: (await asAda('POST', `${ws(c)}/files`, { clientPayload: { surfaceSlug: 'files', name: `pending-${next()}.txt`, size: 5, contentType: 'text/plain' } })).uploadId as string,
  }),
  /** carol, a commenter of the workspace (again, if a probe removed her). */
  member: async (c: Context) => {
    await addMember(t, c.f.workspaceId, c.f.memberId, 'commenter');
    return { memberId: c.f.memberId };
  },
};

const png = () => sharp({ create: { width: 4, height: 4, channels: 3, background: '#3a7' } }).png().toBuffer();
const text = (name: string): Part[] => [{ name: 'file', bytes: new TextEncoder().encode('hello\n'), filename: name, type: 'text/plain' }];
const suggest = () => ({ mode: 'suggest' });

const PROBES: Probe[] = [
  // The workspace itself.
  { op: 'PATCH /api/workspaces/{slug}', variant: 'visibility', reach: 'workspace', body: () => ({ visibility: 'public' }) },
  { op: 'PATCH /api/workspaces/{slug}', variant: 'name', reach: 'workspace', body: () => ({ name: 'Renamed by a key' }) },
  { op: 'PATCH /api/workspaces/{slug}', variant: 'timeZone', reach: 'workspace', body: () => ({ timeZone: 'Europe/Paris' }) },
  { op: 'DELETE /api/workspaces/{slug}', reach: 'workspace' },
  { op: 'POST /api/workspaces/{slug}/unarchive', reach: 'workspace' },
  { op: 'POST /api/workspaces/{slug}/pin', reach: 'workspace', allowed: ['viewer scoped'] },
  { op: 'DELETE /api/workspaces/{slug}/pin', reach: 'workspace', allowed: ['viewer scoped'] },
  { op: 'POST /api/workspaces/{slug}/share', reach: 'workspace', body: () => ({ email: 'outsider@example.test', role: 'editor' }) },
  { op: 'PATCH /api/workspaces/{slug}/members/{memberId}', reach: 'workspace', params: fresh.member, body: () => ({ role: 'editor' }) },
  { op: 'DELETE /api/workspaces/{slug}/members/{memberId}', reach: 'workspace', params: fresh.member },
  { op: 'POST /api/workspaces/{slug}/webhooks', reach: 'workspace', body: () => ({ url: 'http://127.0.0.1:9/key-hook', events: ['row.created'] }) },
  { op: 'PATCH /api/workspaces/{slug}/webhooks/{id}', reach: 'workspace', params: (c) => ({ id: c.f.webhookId }), body: () => ({ url: 'http://127.0.0.1:9/moved' }) },
  { op: 'DELETE /api/workspaces/{slug}/webhooks/{id}', reach: 'workspace', params: fresh.webhook },
  { op: 'POST /api/webhook-deliveries/{id}/retry', reach: 'workspace', params: (c) => ({ id: c.f.deliveryId }) },
  // Surfaces, columns, views, versions.
  { op: 'POST /api/workspaces/{slug}/surfaces', reach: 'workspace', body: () => ({ kind: 'html', slug: `by-key-${next()}`, name: 'By a key' }) },
  { op: 'PATCH /api/workspaces/{slug}/surfaces/{surfaceSlug}', reach: 'workspace', params: fresh.page, body: () => ({ name: 'Renamed page' }) },
  { op: 'DELETE /api/workspaces/{slug}/surfaces/{surfaceSlug}', reach: 'workspace', params: fresh.page, query: () => ({ force: 'true' }) },
  { op: 'PUT /api/workspaces/{slug}/surfaces/{surfaceSlug}/html', reach: 'workspace', params: fresh.page, body: () => ({ html: '<p>By a key</p>' }) },
  { op: 'POST /api/workspaces/{slug}/columns', reach: 'workspace', body: () => ({ column: { key: `k${next()}`, label: 'By a key', type: 'text' } }) },
  { op: 'PUT /api/workspaces/{slug}/columns', reach: 'workspace', body: (c) => ({ columns: c.f.columns }) },
  { op: 'POST /api/workspaces/{slug}/views', reach: 'workspace', body: () => ({ name: 'By a key' }) },
  { op: 'PATCH /api/workspaces/{slug}/views/{id}', reach: 'workspace', params: fresh.view, body: () => ({ name: 'Renamed view' }) },
  { op: 'DELETE /api/workspaces/{slug}/views/{id}', reach: 'workspace', params: fresh.view },
  { op: 'POST /api/workspaces/{slug}/surfaces/{surfaceSlug}/versions', reach: 'workspace', params: (c) => ({ surfaceSlug: c.f.tableSurface }), body: () => ({ name: 'By a key' }) },
  {
    op: 'POST /api/workspaces/{slug}/surfaces/{surfaceSlug}/versions/{versionId}/restore',
    reach: 'workspace',
    params: (c) => ({ surfaceSlug: c.f.tableSurface, versionId: c.f.versionId }),
  },
  // Rows: a plain write is refused, the same write as a suggestion is what a suggester does.
  { op: 'POST /api/workspaces/{slug}/rows', reach: 'workspace', body: () => ({ data: { title: 'By a key' } }) },
  { op: 'POST /api/workspaces/{slug}/rows', variant: 'mode=suggest', reach: 'workspace', query: suggest, body: () => ({ data: { title: 'Suggested' } }), allowed: SUGGESTERS, allowedStatus: 202 },
  { op: 'PATCH /api/workspaces/{slug}/rows/{id}', reach: 'workspace', params: fresh.row, body: () => ({ data: { title: 'Changed by a key' } }) },
  {
    op: 'PATCH /api/workspaces/{slug}/rows/{id}',
    variant: 'mode=suggest',
    reach: 'workspace',
    params: fresh.row,
    query: suggest,
    body: () => ({ data: { title: 'Suggested change' } }),
    allowed: SUGGESTERS,
    allowedStatus: 202,
  },
  { op: 'DELETE /api/workspaces/{slug}/rows/{id}', reach: 'workspace', params: fresh.row },
  { op: 'DELETE /api/workspaces/{slug}/rows/{id}', variant: 'mode=suggest', reach: 'workspace', params: fresh.row, query: suggest, allowed: SUGGESTERS, allowedStatus: 202 },
  { op: 'PATCH /api/workspaces/{slug}/rows/bulk', reach: 'workspace', params: fresh.row, body: (_, row) => ({ updates: [{ id: row.id, data: { title: 'Bulk by a key' } }] }) },
  { op: 'POST /api/workspaces/{slug}/rows/move', reach: 'workspace', params: fresh.row, body: (c, row) => ({ rowIds: [row.id], surface: c.f.tableSurface }) },
  { op: 'POST /api/workspaces/{slug}/rows/import', reach: 'workspace', multipart: () => [{ name: 'file', bytes: new TextEncoder().encode('title\nImported\n'), filename: 'rows.csv', type: 'text/csv' }] },
  {
    op: 'POST /api/workspaces/{slug}/rows/{id}/attachments/{columnKey}',
    reach: 'workspace',
    params: async (c) => ({ ...(await fresh.row(c)), columnKey: 'photos' }),
    multipart: () => text('cell.txt'),
  },
  { op: 'POST /api/workspaces/{slug}/rows/query', reach: 'workspace', body: () => ({ limit: 1 }), allowed: KEYS },
  // Tries a formula without saving anything: a read.
  { op: 'POST /api/workspaces/{slug}/formula/check', reach: 'workspace', body: () => ({ formula: '1 + 1' }), allowed: KEYS },
  // Docs.
  { op: 'PUT /api/workspaces/{slug}/doc', reach: 'workspace', query: () => ({ surface: 'notes' }), body: () => ({ markdown: '# Notes\n\nRewritten by a key.\n' }) },
  {
    op: 'PUT /api/workspaces/{slug}/doc',
    variant: 'mode=suggest',
    reach: 'workspace',
    query: () => ({ surface: 'notes', mode: 'suggest' }),
    body: () => ({ markdown: `# Notes\n\nProposal ${next()}.\n` }),
    allowed: SUGGESTERS,
    allowedStatus: 202,
  },
  { op: 'POST /api/workspaces/{slug}/doc/sections', reach: 'workspace', query: () => ({ surface: 'notes' }), body: () => ({ markdown: 'Appended by a key.' }) },
  {
    op: 'POST /api/workspaces/{slug}/doc/sections',
    variant: 'mode=suggest',
    reach: 'workspace',
    query: () => ({ surface: 'notes', mode: 'suggest' }),
    body: () => ({ markdown: `Suggested section ${next()}.` }),
    allowed: SUGGESTERS,
    allowedStatus: 202,
  },
  { op: 'POST /api/workspaces/{slug}/upload', reach: 'workspace', multipart: async () => [{ name: 'file', bytes: await png(), filename: 'image.png', type: 'image/png' }] },
  {
    op: 'POST /api/workspaces/{slug}/doc/import',
    reach: 'workspace',
    query: () => ({ surface: 'notes' }),
    multipart: () => [{ name: 'file', bytes: new TextEncoder().encode('# Notes\n\nImported by a key.\n'), filename: 'notes.md', type: 'text/markdown' }],
  },
  // Suggestions: deciding is a person's.
  { op: 'POST /api/suggestions/{id}/accept', reach: 'workspace', params: (c) => ({ id: c.f.suggestionId }) },
  { op: 'POST /api/suggestions/{id}/reject', reach: 'workspace', params: (c) => ({ id: c.f.suggestionId }) },
  { op: 'POST /api/workspaces/{slug}/suggestions/accept-all', reach: 'workspace' },
  { op: 'POST /api/workspaces/{slug}/suggestions/reject-all', reach: 'workspace' },
  // Comments: a suggester comments, replies, reacts and resolves; its own comments it may delete.
  { op: 'POST /api/workspaces/{slug}/comments', reach: 'workspace', body: () => ({ target: { type: 'workspace' }, body: 'A comment by a key' }), allowed: SUGGESTERS },
  { op: 'POST /api/workspaces/{slug}/rows/{id}/comments', reach: 'workspace', params: fresh.row, body: () => ({ body: 'On a row' }), allowed: SUGGESTERS },
  ...(['/api/comments/{id}', '/api/workspaces/{slug}/comments/{id}'] as const).flatMap((at): Probe[] => [
    { op: `POST ${at}/reactions`, reach: 'workspace', params: fresh.comment, body: () => ({ emoji: '🎉' }), allowed: SUGGESTERS },
    { op: `DELETE ${at}/reactions/{emoji}`, reach: 'workspace', params: fresh.comment, allowed: SUGGESTERS },
    { op: `POST ${at}/resolve`, reach: 'workspace', params: fresh.comment, allowed: SUGGESTERS },
    { op: `POST ${at}/unresolve`, reach: 'workspace', params: fresh.comment, allowed: SUGGESTERS },
    { op: `DELETE ${at}`, reach: 'workspace', params: fresh.comment, allowed: SUGGESTERS },
  ]),
  // Files: reading (a zip) is a read; everything else writes.
  { op: 'POST /api/workspaces/{slug}/files', reach: 'workspace', body: () => ({ clientPayload: { surfaceSlug: 'files', name: 'direct.txt', size: 5, contentType: 'text/plain' } }) },
  { op: 'POST /api/workspaces/{slug}/files/uploads/{uploadId}/complete', reach: 'workspace', params: fresh.upload },
  {
    op: 'POST /api/workspaces/{slug}/files/proxy-upload',
    reach: 'workspace',
    multipart: () => [{ name: 'surface_slug', value: 'files' }, { name: 'parent_folder_id', value: '' }, ...text('by-key.txt')],
  },
  { op: 'POST /api/workspaces/{slug}/files/folders', reach: 'workspace', body: () => ({ surfaceSlug: 'files', name: 'By a key' }) },
  { op: 'PATCH /api/workspaces/{slug}/files/folders/{folderId}', reach: 'workspace', params: fresh.folder, body: () => ({ name: 'Renamed folder' }) },
  { op: 'DELETE /api/workspaces/{slug}/files/folders/{folderId}', reach: 'workspace', params: fresh.folder },
  { op: 'PATCH /api/workspaces/{slug}/files/{fileId}', reach: 'workspace', params: fresh.file, body: () => ({ name: 'renamed.txt' }) },
  { op: 'PATCH /api/workspaces/{slug}/files/{fileId}/metadata', reach: 'workspace', params: fresh.file, body: () => ({ starred: true }) },
  { op: 'DELETE /api/workspaces/{slug}/files/{fileId}', reach: 'workspace', params: fresh.file },
  { op: 'POST /api/workspaces/{slug}/files/{fileId}/share', reach: 'workspace', params: fresh.file },
  { op: 'DELETE /api/workspaces/{slug}/files/{fileId}/share', reach: 'workspace', params: fresh.share, query: (_, share) => ({ tokenId: share.tokenId! }) },
  { op: 'POST /api/workspaces/{slug}/files/{fileId}/versions', reach: 'workspace', params: fresh.file, multipart: () => text('notes.txt') },
  { op: 'POST /api/workspaces/{slug}/files/zip', reach: 'workspace', body: (c) => ({ surfaceSlug: 'files', fileIds: [c.f.fileId] }), allowed: KEYS },
  // The organisation.
  { op: 'POST /api/workspaces', reach: 'account', body: () => ({ name: 'By a key', slug: `by-key-${next()}`, mode: 'table' }) },
  {
    op: 'POST /api/workspaces/import',
    reach: 'account',
    multipart: async () => [{ name: 'slug', value: `imported-by-key-${next()}` }, { name: 'file', bytes: await zipOf([['page.md', '# Page\n']]), filename: 'folder.zip', type: 'application/zip' }],
    allowedStatus: 202,
  },
  { op: 'POST /api/orgs/{slug}/webhooks', reach: 'org', body: () => ({ url: 'http://127.0.0.1:9/org-hook', events: ['row.created'] }) },
  { op: 'PATCH /api/orgs/{slug}/webhooks/{id}', reach: 'org', params: (c) => ({ id: c.f.orgWebhookId }), body: () => ({ url: 'http://127.0.0.1:9/moved' }) },
  { op: 'DELETE /api/orgs/{slug}/webhooks/{id}', reach: 'org', params: fresh.orgWebhook },
  { op: 'POST /api/orgs/{slug}/invites', reach: 'org', body: () => ({ email: `newcomer-${next()}@example.test`, role: 'editor' }) },
  { op: 'DELETE /api/orgs/{slug}/invites/{id}', reach: 'org', params: fresh.invite },
  { op: 'POST /api/orgs/{slug}/invites/{id}/resend', reach: 'org', params: fresh.invite },
  { op: 'DELETE /api/orgs/{slug}/members/{userId}', reach: 'org', params: (c) => ({ userId: c.f.orgMemberId }) },
  { op: 'POST /api/billing/upgrade', reach: 'org', body: () => ({ plan: 'pro' }) },
  { op: 'POST /api/billing/downgrade', reach: 'org', body: () => ({}) },
  { op: 'POST /api/billing/checkout', reach: 'org', body: () => ({ plan: 'pro' }) },
  { op: 'POST /api/billing/portal', reach: 'org', body: () => ({}) },
  // Asking for help or a higher limit: any member and any key but a suggest-only one (docs/ACCESS.md, docs/BILLING.md).
  { op: 'POST /api/billing/request-limit-increase', reach: 'org', body: () => ({ kind: 'rows', desiredValue: 20_000, reason: 'More rows' }), allowed: UNSCOPED_VIEWER },
  { op: 'POST /api/support', reach: 'org', body: () => ({ kind: 'question', title: 'From a key', body: 'How?' }), allowed: UNSCOPED_VIEWER },
  { op: 'POST /api/support/upload', reach: 'org', multipart: async () => [{ name: 'file', bytes: await png(), filename: 'shot.png', type: 'image/png' }], allowed: UNSCOPED_VIEWER },
  // The account: people in a session only.
  { op: 'POST /api/keys', reach: 'account', body: () => ({ name: 'minted by a key', agentName: 'child', role: 'viewer' }) },
  { op: 'DELETE /api/keys/{id}', reach: 'account', params: (c) => ({ id: c.f.otherKeyId }) },
  { op: 'PATCH /api/me', reach: 'account', body: () => ({ name: 'Renamed by a key' }) },
  { op: 'POST /api/me/avatar', reach: 'account', multipart: async () => [{ name: 'file', bytes: await png(), filename: 'me.png', type: 'image/png' }] },
  { op: 'POST /api/me/elevate', reach: 'account', body: () => ({ scope: 'keys' }) },
  { op: 'PATCH /api/me/org', reach: 'account', body: () => ({ name: 'Renamed by a key' }) },
  { op: 'DELETE /api/me/sessions', reach: 'account' },
  { op: 'DELETE /api/me/oauth-grants', reach: 'account' },
  { op: 'DELETE /api/me/oauth-grants/{id}', reach: 'account', params: () => ({ id: 'grant_none' }) },
  { op: 'POST /api/invites/{token}', reach: 'account', params: () => ({ token: 'a'.repeat(43) }) },
  { op: 'POST /api/org-invites/{token}', reach: 'account', params: () => ({ token: 'a'.repeat(43) }) },
  // A principal's own read marks on its inbox: any key marks its agent's, never anyone else's (docs/COMMENTS.md "Read marks").
  { op: 'POST /api/me/read-marks', reach: 'account', body: () => ({ through: new Date().toISOString() }), allowed: KEYS },
  // Runs (docs/RUNS.md): a suggest-only key's suggestions may join a run of its own, which it ends; no restricted key reverts a run.
  { op: 'POST /api/workspaces/{slug}/runs', reach: 'workspace', body: () => ({ name: `run ${next()}` }), allowed: SUGGESTERS, allowedStatus: 201 },
  {
    op: 'PATCH /api/workspaces/{slug}/runs/{runId}',
    reach: 'workspace',
    params: async (c) => ({ runId: (await made(t.request('POST', `${ws(c)}/runs`, { as: SUGGESTERS.includes(c.key) ? c.as : ada.as, body: { name: `run ${next()}` } }), 201)).run.id }),
    body: () => ({ status: 'ended' }),
    allowed: SUGGESTERS,
  },
  {
    op: 'POST /api/workspaces/{slug}/runs/{runId}/revert',
    reach: 'workspace',
    params: async (c) => ({ runId: (await made(t.request('POST', `${ws(c)}/runs`, { as: ada.as, body: { name: `run ${next()}` } }), 201)).run.id }),
    allowed: [],
  },
];

/** What the key should get: a 2xx when the list allows it, else 403, or 404 where the organisation is invisible to a scoped key. */
function expectedStatus(probe: Probe, key: KeyName): number {
  if (probe.allowed?.includes(key)) return probe.allowedStatus ?? 200;
  return probe.reach === 'org' && key.endsWith('scoped') ? 404 : 403;
}

function fill(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return encodeURIComponent(value);
  });
}

/** Every URL a probe is served at: a workspace path under both its forms. */
function urlsOf(probe: Probe, c: Context, params: Record<string, string>): string[] {
  const [, path] = probe.op.split(' ') as [string, string];
  const all = { slug: path.startsWith('/api/orgs/{slug}') ? c.f.orgSlug : c.f.slug, orgSlug: c.f.orgSlug, ...params };
  const query = probe.query ? `?${new URLSearchParams(probe.query(c, params))}` : '';
  const forms = path.startsWith('/api/workspaces/{slug}') ? [path, path.replace('/api/workspaces/{slug}', '/api/orgs/{orgSlug}/workspaces/{slug}')] : [path];
  return forms.map((form) => fill(form, all) + query);
}

async function send(probe: Probe, c: Context, url: string, params: Record<string, string>): Promise<TestResponse> {
  if (probe.multipart) return postMultipart(t, url, await probe.multipart(c), c.as);
  const body = probe.body?.(c, params);
  return t.request(probe.op.split(' ')[0]!, url, { as: c.as, ...(body !== undefined ? { body } : {}) });
}

beforeAll(async () => {
  t = await startTestApp({ clock, env: { API_WRITES_PER_MINUTE: '1000000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  ada = await signInUser(t, 'ada@keys.test');
  const carol = await signInUser(t, 'carol@keys.test');
  const bob = await signInUser(t, 'bob@keys.test');
  await addOrgMember(t, ada.orgId, bob.userId, 'editor');
  await t.services.db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', ada.orgId).execute();
  const workspace = await createWorkspace(t, ada, { name: 'Keyed', slug: 'keyed' });
  const base = '/api/workspaces/keyed';
  for (const surface of [
    { kind: 'doc', slug: 'notes', name: 'Notes' },
    { kind: 'html', slug: 'page', name: 'Page' },
    { kind: 'files', slug: 'files', name: 'Files' },
  ]) {
    await asAda('POST', `${base}/surfaces`, surface);
  }
  await asAda('PUT', `${base}/doc?surface=notes`, { markdown: '# Notes\n\nThe original.\n' });
  const surfaces = (await asAda('GET', `${base}/surfaces`)).surfaces as Array<{ kind: string; slug: string }>;
  const tableSurface = surfaces.find((s) => s.kind === 'table')!.slug;
  await addMembership(t, workspace.id, carol.userId, 'commenter');
  await asAda('POST', `${base}/columns`, { column: { key: 'photos', label: 'Photos', type: 'attachment' } });
  const columns = (await asAda('GET', `${base}/columns`)).columns as unknown[];

  const file = await ok(await proxyUpload(t, `${base}/files`, ada.as, { bytes: new TextEncoder().encode('hello\n'), name: 'notes.txt', type: 'text/plain' }));
  const webhook = await asAda('POST', `${base}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['row.created'] });
  await asAda('POST', `${base}/rows`, { data: { title: 'Seed' } });
  const deliveries = await asAda('GET', `${base}/webhooks/${webhook.id}/deliveries`);
  const orgWebhook = await asAda('POST', `/api/orgs/${ada.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/org', events: ['row.created'] });
  const version = await asAda('POST', `${base}/surfaces/${tableSurface}/versions`, { name: 'Before the keys' });
  const suggestion = await ok(await t.request('POST', `${base}/rows?mode=suggest`, { as: ada.as, body: { data: { title: 'Ada suggests' } } }), 202);
  const other = await insertKey(t, ada, { role: 'viewer', agentName: 'bystander' });

  keys['suggest-only'] = await insertKey(t, ada, { role: 'editor', agentName: 'proposer', suggestOnly: true });
  keys['suggest-only scoped'] = await insertKey(t, ada, { role: 'editor', agentName: 'scoped proposer', suggestOnly: true, scopeWorkspaceId: workspace.id });
  keys.viewer = await insertKey(t, ada, { role: 'viewer', agentName: 'reader' });
  keys['viewer scoped'] = await insertKey(t, ada, { role: 'viewer', agentName: 'scoped reader', scopeWorkspaceId: workspace.id });

  f = {
    slug: 'keyed',
    workspaceId: workspace.id,
    orgSlug: ada.orgSlug,
    tableSurface,
    columns,
    fileId: file.id,
    webhookId: webhook.id,
    orgWebhookId: orgWebhook.id,
    deliveryId: deliveries.deliveries[0].id,
    versionId: version.id,
    suggestionId: suggestion.suggestion.id,
    memberId: carol.userId,
    orgMemberId: bob.userId,
    otherKeyId: `key_${other.agentId}`,
  };
}, 120_000);

afterAll(async () => {
  await t?.close();
  await t?.store.dispose();
});

describe('restricted keys: every write operation of /openapi.json', () => {
  it('has a probe for every write operation, or a reason it is no key operation', async () => {
    const openapi = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const probed = new Set(PROBES.map((p) => p.op));
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(openapi.paths)) {
      for (const method of Object.keys(methods)) {
        if (method === 'get') continue;
        const op = `${method.toUpperCase()} ${path.replace('/api/orgs/{orgSlug}/workspaces/{slug}', '/api/workspaces/{slug}')}`;
        if (!probed.has(op) && !(op in NOT_KEY_OPERATIONS)) missing.push(op);
      }
    }
    expect(missing, 'write operations without a probe: add one with the keys that may call it').toEqual([]);
    const stale = [...probed, ...Object.keys(NOT_KEY_OPERATIONS)].filter((op) => {
      const [method, path] = op.split(' ') as [string, string];
      return !openapi.paths[path]?.[method.toLowerCase()];
    });
    expect(stale, 'probes of operations /openapi.json no longer has').toEqual([]);
  });

  it.each(KEYS)('a %s key: what its list allows succeeds, everything else is refused', async (key) => {
    // Each key starts with fresh hourly budgets (invites, share mails, tickets): the limits are not what this test is about.
    clock.advance(61 * 60_000);
    const mismatches: string[] = [];
    let requests = 0;
    for (const probe of PROBES) {
      const c: Context = { f, key, as: keys[key].as };
      const expected = expectedStatus(probe, key);
      // Each URL form gets its own targets: an allowed probe may use one up (a deleted comment).
      for (const form of [0, 1]) {
        const params = (await probe.params?.(c)) ?? {};
        const urls = urlsOf(probe, c, params);
        if (form >= urls.length) continue;
        const res = await send(probe, c, urls[form]!, params);
        requests++;
        if (res.status !== expected) {
          mismatches.push(`${probe.op}${probe.variant ? ` (${probe.variant})` : ''} at ${urls[form]}: expected ${expected}, got ${res.status} ${res.body?.error?.code ?? ''}`);
        }
      }
    }
    console.info(`${key} key: ${requests} requests, ${mismatches.length} not as its list says`);
    expect(mismatches, `${mismatches.length} of ${requests} requests`).toEqual([]);
  }, 240_000);
});

describe('the cases of issue 33: a suggest-only key grants no one anything, and acts on nothing directly', () => {
  const suggester = () => keys['suggest-only'].as;
  const base = () => `/api/workspaces/${f.slug}`;

  it('cannot make the workspace public: 403, and an anonymous reader still finds nothing', async () => {
    for (const as of [suggester(), keys['suggest-only scoped'].as]) {
      const res = await t.request('PATCH', base(), { as, body: { visibility: 'public' } });
      expect(res.status, res.text).toBe(403);
      expect(res.body.error.message).toContain('suggest');
    }
    expect((await asAda('GET', base())).visibility).toBe('private');
    // Past the failed-auth window the refusals above filled (it answers anonymous callers 429 for a while).
    clock.advance(11 * 60_000);
    expect((await t.request('GET', `${base()}/rows`)).status).toBe(404);
  });

  it('cannot share the workspace with an editor: 403, and no invitation is mailed', async () => {
    const res = await t.request('POST', `${base()}/share`, { as: suggester(), body: { email: 'outsider@example.test', role: 'editor' } });
    expect(res.status, res.text).toBe(403);
    expect((await t.outbox()).filter((mail) => mail.to === 'outsider@example.test')).toEqual([]);
  });

  it('cannot subscribe a webhook: 403, no signing secret, no new subscription', async () => {
    const before = (await asAda('GET', `${base()}/webhooks`)).webhooks.length;
    const res = await t.request('POST', `${base()}/webhooks`, { as: suggester(), body: { url: 'http://127.0.0.1:9/exfiltrate', events: ['row.created'] } });
    expect(res.status, res.text).toBe(403);
    expect(res.text).not.toContain('secret');
    expect((await asAda('GET', `${base()}/webhooks`)).webhooks).toHaveLength(before);
  });

  it('cannot upload a file: 403, and the files surface holds what it held', async () => {
    const listed = async () => (await asAda('GET', `${base()}/files?surfaceSlug=files`)).files.map((file: { name: string }) => file.name);
    const before = await listed();
    const res = await proxyUpload(t, `${base()}/files`, suggester(), { bytes: new TextEncoder().encode('proposal\n'), name: 'proposal.txt', type: 'text/plain' });
    expect(res.status, res.text).toBe(403);
    expect(await listed()).toEqual(before);
  });

  it('cannot rename the workspace: 403, the name stays', async () => {
    const res = await t.request('PATCH', base(), { as: suggester(), body: { name: 'Taken over' } });
    expect(res.status, res.text).toBe(403);
    expect((await asAda('GET', base())).name).toBe('Keyed');
  });

  it('without a workspace scope: no organisation webhook, no organisation invite, no new workspace (403 each, nothing written)', async () => {
    const org = `/api/orgs/${f.orgSlug}`;
    const hooks = (await asAda('GET', `${org}/webhooks`)).webhooks.length;
    const hook = await t.request('POST', `${org}/webhooks`, { as: suggester(), body: { url: 'http://127.0.0.1:9/org-wide', events: ['row.created'] } });
    expect(hook.status, hook.text).toBe(403);
    expect((await asAda('GET', `${org}/webhooks`)).webhooks).toHaveLength(hooks);

    const invite = await t.request('POST', `${org}/invites`, { as: suggester(), body: { email: 'colleague@example.test', role: 'editor' } });
    expect(invite.status, invite.text).toBe(403);
    expect((await asAda('GET', `${org}/invites`)).invites.map((i: { email: string }) => i.email)).not.toContain('colleague@example.test');
    expect((await t.outbox()).filter((mail) => mail.to === 'colleague@example.test')).toEqual([]);

    const created = await t.request('POST', '/api/workspaces', { as: suggester(), body: { name: 'Side door', slug: 'side-door', mode: 'table' } });
    expect(created.status, created.text).toBe(403);
    expect((await t.request('GET', '/api/workspaces/side-door', { as: ada.as })).status).toBe(404);
  });

  it('keeps what it is for: reading, suggesting, commenting, its inbox', async () => {
    const as = suggester();
    for (const path of [`${base()}/rows`, `${base()}/doc?surface=notes`, `${base()}/comments`, `${base()}/suggestions`, `${base()}/files?surfaceSlug=files`, `${base()}/surfaces/${f.tableSurface}/versions`, '/api/me/messages']) {
      const res = await t.request('GET', path, { as });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
    const suggested = await t.request('POST', `${base()}/rows?mode=suggest`, { as, body: { data: { title: 'A proposal' } } });
    expect(suggested.status, suggested.text).toBe(202);
    const comment = await t.request('POST', `${base()}/comments`, { as, body: { target: { type: 'workspace' }, body: 'Why this?' } });
    expect(comment.status, comment.text).toBe(200);
  });
});

describe('over MCP: the same operations, the same lists', () => {
  const clients = checkedClients(() => t);
  afterAll(() => clients.closeAll());

  type ToolProbe = { tool: string; args: (c: Context) => Promise<Record<string, unknown>> | Record<string, unknown>; allowed?: boolean };
  const slug = (c: Context) => ({ slug: c.f.slug });
  const TOOL_PROBES: ToolProbe[] = [
    { tool: 'create_row', args: (c) => ({ ...slug(c), data: { title: 'By a key' } }) },
    { tool: 'create_row', args: (c) => ({ ...slug(c), data: { title: 'Suggested' }, mode: 'suggest' }), allowed: true },
    { tool: 'update_row', args: async (c) => ({ ...slug(c), ...(await fresh.row(c)), data: { title: 'Changed' } }) },
    { tool: 'update_row', args: async (c) => ({ ...slug(c), ...(await fresh.row(c)), data: { title: 'Suggested' }, mode: 'suggest' }), allowed: true },
    { tool: 'delete_row', args: async (c) => ({ ...slug(c), ...(await fresh.row(c)) }) },
    { tool: 'delete_row', args: async (c) => ({ ...slug(c), ...(await fresh.row(c)), mode: 'suggest' }), allowed: true },
    { tool: 'bulk_update_rows', args: async (c) => ({ ...slug(c), updates: [{ id: (await fresh.row(c)).id, data: { title: 'Bulk' } }] }) },
    { tool: 'move_rows', args: async (c) => ({ ...slug(c), rowIds: [(await fresh.row(c)).id], surface: c.f.tableSurface }) },
    { tool: 'add_column', args: (c) => ({ ...slug(c), column: { key: `f${next()}`, label: 'By a key', type: 'formula', formula: '1 + 1' } }) },
    { tool: 'create_view', args: (c) => ({ ...slug(c), name: 'By a key' }) },
    { tool: 'update_view', args: async (c) => ({ ...slug(c), ...(await fresh.view(c)), name: 'Renamed' }) },
    { tool: 'delete_view', args: async (c) => ({ ...slug(c), ...(await fresh.view(c)) }) },
    { tool: 'replace_doc', args: (c) => ({ ...slug(c), surface: 'notes', markdown: '# Notes\n\nRewritten.\n' }) },
    { tool: 'replace_doc', args: (c) => ({ ...slug(c), surface: 'notes', markdown: `# Notes\n\nMCP proposal ${next()}.\n`, mode: 'suggest' }), allowed: true },
    { tool: 'append_doc_section', args: (c) => ({ ...slug(c), surface: 'notes', markdown: 'Appended.' }) },
    { tool: 'append_doc_section', args: (c) => ({ ...slug(c), surface: 'notes', markdown: `Suggested ${next()}.`, mode: 'suggest' }), allowed: true },
    { tool: 'import_doc', args: (c) => ({ ...slug(c), surface: 'notes', name: 'notes.md', contentBase64: Buffer.from('# Notes\n\nImported.\n').toString('base64') }) },
    { tool: 'accept_suggestion', args: (c) => ({ id: c.f.suggestionId }) },
    { tool: 'reject_suggestion', args: (c) => ({ id: c.f.suggestionId }) },
    { tool: 'add_comment', args: (c) => ({ ...slug(c), target: { type: 'workspace' }, body: 'Over MCP' }), allowed: true },
    { tool: 'reply_to_comment', args: async (c) => ({ commentId: (await fresh.comment(c)).id, body: 'A reply' }), allowed: true },
    { tool: 'resolve_comment', args: async (c) => ({ ...slug(c), id: (await fresh.comment(c)).id }), allowed: true },
    { tool: 'unresolve_comment', args: async (c) => ({ ...slug(c), id: (await fresh.comment(c)).id }), allowed: true },
    { tool: 'react_to_comment', args: async (c) => ({ ...slug(c), id: (await fresh.comment(c)).id, emoji: '🎉' }), allowed: true },
    { tool: 'name_version', args: (c) => ({ ...slug(c), surfaceSlug: c.f.tableSurface, name: 'By a key' }) },
    { tool: 'restore_version', args: (c) => ({ ...slug(c), surfaceSlug: c.f.tableSurface, versionId: c.f.versionId }) },
    { tool: 'upgrade_plan', args: () => ({ plan: 'pro' }) },
    { tool: 'downgrade_plan', args: () => ({}) },
    { tool: 'request_limit_increase', args: () => ({ kind: 'rows', desiredValue: 20_000, reason: 'More rows' }) },
    { tool: 'create_support_ticket', args: () => ({ kind: 'question', title: 'From a key', body: 'How?' }) },
    { tool: 'start_run', args: (c) => ({ ...slug(c), name: `MCP run ${next()}` }), allowed: true },
    { tool: 'end_run', args: async (c) => ({ ...slug(c), runId: (await made(t.request('POST', `${ws(c)}/runs`, { as: c.as, body: { name: `run ${next()}` } }), 201)).run.id }), allowed: true },
    { tool: 'revert_run', args: async (c) => ({ ...slug(c), runId: (await made(t.request('POST', `${ws(c)}/runs`, { as: c.as, body: { name: `run ${next()}` } }), 201)).run.id }) },
  ];

  it('every tool that writes: what a suggest-only key may do succeeds, the rest is refused with 403', async () => {
    const c: Context = { f, key: 'suggest-only', as: keys['suggest-only'].as };
    const client = await clients.open(bearerOf(c.as));
    const writers = (await client.listTools()).tools.filter((tool) => !tool.annotations?.readOnlyHint).map((tool) => tool.name);
    expect([...new Set(TOOL_PROBES.map((p) => p.tool))].sort(), 'a probe for every tool that writes').toEqual([...writers].sort());
    const mismatches: string[] = [];
    for (const probe of TOOL_PROBES) {
      const args = await probe.args(c);
      const result: ToolResult = await client.callTool({ name: probe.tool, arguments: args });
      const status = result.isError ? refusal(result).status : 'ok';
      const expected = probe.allowed ? 'ok' : 403;
      if (status !== expected) mismatches.push(`${probe.tool} ${JSON.stringify(args)}: expected ${expected}, got ${status} ${JSON.stringify(result.content).slice(0, 200)}`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('one principal, several credentials: each is decided by its own lists', () => {
  // The request context (the caller's standing) is cached for up to a second: a credential must never be decided with another's.
  it('an agent with a plain and a suggest-only key: each gets its own answer, whichever came first', async () => {
    const agentId = await seedAgent(t, ada, 'two minds');
    const plain = { bearer: (await seedKey(t, { agentId, orgId: ada.orgId, ownerUserId: ada.userId })).secret };
    const careful = { bearer: (await seedKey(t, { agentId, orgId: ada.orgId, ownerUserId: ada.userId, suggestOnly: true })).secret };
    const base = `/api/workspaces/${f.slug}`;
    // Each used once before (a key's first use is noted, which retires cached reads).
    for (const as of [plain, careful, plain]) expect((await t.request('GET', base, { as })).status).toBe(200);
    const renamed = await t.request('PATCH', base, { as: careful, body: { name: 'Renamed by the careful key' } });
    expect(renamed.status, renamed.text).toBe(403);
    expect((await asAda('GET', base)).name).toBe('Keyed');

    expect((await t.request('GET', base, { as: careful })).status).toBe(200);
    const written = await t.request('POST', `${base}/rows`, { as: plain, body: { data: { title: 'By the plain key' } } });
    expect(written.status, written.text).toBe(200);
  });

  it('a person and their read-only OAuth token: the token writes nothing, whichever came first', async () => {
    const { tokens } = await grantTokens(t, ada.cookie, { scope: 'read', grant: {} });
    expect(tokens.scope).toBe('read');
    const token = { bearer: tokens.access_token };
    const base = `/api/workspaces/${f.slug}`;
    for (const as of [token, ada.as, token, ada.as]) expect((await t.request('GET', base, { as })).status).toBe(200);
    const written = await t.request('POST', `${base}/rows`, { as: token, body: { data: { title: 'By a read-only token' } } });
    expect(written.status, written.text).toBe(403);

    expect((await t.request('GET', base, { as: token })).status).toBe(200);
    const own = await t.request('POST', `${base}/rows`, { as: ada.as, body: { data: { title: 'By ada herself' } } });
    expect(own.status, own.text).toBe(200);
  });
});
