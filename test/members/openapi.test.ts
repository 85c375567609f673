import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';

let t: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** `/workspaces/...` routes are served at both addresses; `/api/...` ones once. */
const ROUTES: Array<[string, string, { body?: boolean; auth?: 'none' }?]> = [
  ['get', '/workspaces/{slug}/members'],
  ['patch', '/workspaces/{slug}/members/{memberId}', { body: true }],
  ['delete', '/workspaces/{slug}/members/{memberId}'],
  ['post', '/workspaces/{slug}/share', { body: true }],
  ['get', '/api/invites/{token}'],
  ['post', '/api/invites/{token}'],
  ['get', '/api/orgs/{slug}/members'],
  ['delete', '/api/orgs/{slug}/members/{userId}'],
  ['get', '/api/orgs/{slug}/invites'],
  ['post', '/api/orgs/{slug}/invites', { body: true }],
  ['delete', '/api/orgs/{slug}/invites/{id}'],
  ['post', '/api/orgs/{slug}/invites/{id}/resend'],
  ['get', '/api/org-invites/{token}'],
  ['post', '/api/org-invites/{token}'],
];

const pathsOf = (suffix: string) => (suffix.startsWith('/api/') ? [suffix] : [`/api${suffix}`, `/api/orgs/{orgSlug}${suffix}`]);

describe('OpenAPI description of members and invites', () => {
  it('lists every route with its request and response schemas, and is valid', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const [method, suffix, options] of ROUTES) {
      for (const path of pathsOf(suffix)) {
        const operation = doc.paths[path]?.[method];
        expect(operation, `${method} ${path}`).toBeDefined();
        expect(operation.responses['200'].content['application/json'].schema, `${method} ${path} 200`).toBeDefined();
        if (options?.body) expect(operation.requestBody.content['application/json'].schema, `${method} ${path} body`).toBeDefined();
        const pathParams = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name).sort();
        expect(pathParams, `${method} ${path} params`).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      }
    }
    for (const id of ['Member', 'OrgMember', 'Invite', 'PublicInvite']) expect(doc.components.schemas[id], id).toBeDefined();
    expect(doc.paths['/api/orgs/{slug}/invites'].post.responses['402']).toBeDefined();

    const mine = new Set(ROUTES.flatMap(([, suffix]) => pathsOf(suffix)));
    const own = { ...doc, paths: Object.fromEntries(Object.entries(doc.paths).filter(([path]) => mine.has(path))) };
    const result = await validate(own);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });
});
