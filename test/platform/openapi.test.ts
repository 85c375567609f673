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

/** `/api/workspaces/:slug/rows` → `/api/workspaces/{slug}/rows` */
const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1.0 description, version 1.0.1', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.1');
    const result = await validate(structuredClone(res.body));
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('lists every route the app registers, with its method', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const missing = t.app.registeredRoutes
      .filter((r) => r.method !== 'OPTIONS' && !r.url.includes('*'))
      .filter((r) => !doc.paths[toOpenApiPath(r.url)]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    expect(t.app.registeredRoutes.length).toBeGreaterThan(20);
  });

  it('documents request and response schemas for JSON routes', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const withoutResponse: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        if (!operation.responses || Object.keys(operation.responses).length === 0) withoutResponse.push(`${method} ${path}`);
        if (['post', 'put', 'patch'].includes(method) && operation.requestBody === undefined && !/unarchive|pin|resend|elevate|reactions|resolve|retry|sessions|invites\/\{token\}|org-invites|portal|downgrade|upload|runs\/\{runId\}\/revert|rows\/import|doc\/import|workspaces\/import|attachments\/\{columnKey\}|forms\/\{token\}|avatar|versions|share$|admin\/backup|suggestions\/[^/]+\/(accept|reject)$|suggestions\/(accept|reject)-all$/.test(path)) {
          // Writes without a body are the documented action endpoints above; multipart and form posts (uploads, imports, attachments, public forms) describe theirs in words.
          withoutResponse.push(`${method} ${path} (no request body)`);
        }
      }
    }
    expect(withoutResponse).toEqual([]);
  });
});
