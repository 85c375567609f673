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

const ROUTES: Array<[string, string, { body?: boolean }?]> = [
  ['get', '/api/workspaces'],
  ['post', '/api/workspaces', { body: true }],
  ['get', '/workspaces/{slug}'],
  ['patch', '/workspaces/{slug}', { body: true }],
  ['delete', '/workspaces/{slug}'],
  ['post', '/workspaces/{slug}/unarchive'],
  ['post', '/workspaces/{slug}/pin'],
  ['delete', '/workspaces/{slug}/pin'],
  ['get', '/workspaces/{slug}/surfaces'],
  ['post', '/workspaces/{slug}/surfaces', { body: true }],
  ['get', '/workspaces/{slug}/surfaces/{surfaceSlug}'],
  ['patch', '/workspaces/{slug}/surfaces/{surfaceSlug}', { body: true }],
  ['delete', '/workspaces/{slug}/surfaces/{surfaceSlug}'],
];

describe('OpenAPI description of workspaces and surfaces', () => {
  it('lists every route at both addresses with its request and response schemas, and is valid', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const [method, suffix, options] of ROUTES) {
      const paths = suffix.startsWith('/api/') ? [suffix] : [`/api${suffix}`, `/api/orgs/{orgSlug}${suffix}`];
      for (const path of paths) {
        const operation = doc.paths[path]?.[method];
        expect(operation, `${method} ${path}`).toBeDefined();
        expect(operation.responses['200'].content['application/json'].schema).toBeDefined();
        if (options?.body) expect(operation.requestBody.content['application/json'].schema, `${method} ${path} body`).toBeDefined();
        const pathParams = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name).sort();
        expect(pathParams, `${method} ${path} params`).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
      }
    }
    for (const id of ['Workspace', 'WorkspaceDetail', 'Surface']) expect(doc.components.schemas[id], id).toBeDefined();

    // Validate the part of the description these modules own.
    const mine = new Set(ROUTES.flatMap(([, suffix]) => (suffix.startsWith('/api/') ? [suffix] : [`/api${suffix}`, `/api/orgs/{orgSlug}${suffix}`])));
    const own = { ...doc, paths: Object.fromEntries(Object.entries(doc.paths).filter(([path]) => mine.has(path))) };
    const result = await validate(own);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });
});
