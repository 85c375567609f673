import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablesDocumentName } from '../../src/model/document-names';
import { insertRow } from '../../src/model/table/document';
import { startTestApp } from '../helpers/app';
import { acknowledged, connectClient, eventually, synced } from '../helpers/sync';
import { signInPerson, type Person } from '../keys/fixtures';

/** `/metrics`: Prometheus text a scraper can read, counting what happened. */
let t: Awaited<ReturnType<typeof startTestApp>>;
let owner: Person;

beforeAll(async () => {
  t = await startTestApp();
  owner = await signInPerson(t, 'metrics@example.com');
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** The value of one sample line, e.g. `trellis_sync_connections` or `name{label="x"}`. */
function sample(text: string, series: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (line.slice(0, space) === series) return Number(line.slice(space + 1));
  }
  return null;
}

async function scrape(headers: Record<string, string> = {}) {
  const res = await t.request('GET', '/metrics', { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
}

describe('/metrics', () => {
  it('counts requests by route pattern and status, with durations, never by URL', async () => {
    const detail = await t.request('GET', '/api/workspaces/welcome', { as: owner.as });
    expect(detail.status).toBe(200);
    expect((await t.request('GET', `/api/workspaces/no-such-${Date.now()}`, { as: owner.as })).status).toBe(404);
    const text = await scrape();
    expect(sample(text, 'trellis_http_requests_total{method="GET",route="/api/workspaces/:slug",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trellis_http_requests_total{method="GET",route="/api/workspaces/:slug",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'trellis_http_request_duration_seconds_count{method="GET",route="/api/workspaces/:slug",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('no-such-');
    expect(text).not.toContain(owner.cookie);
    // Process metrics come along.
    expect(sample(text, 'trellis_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('shows open sync connections, loaded documents, log appends and commit latency', async () => {
    const detail = await t.request('GET', '/api/workspaces/welcome', { as: owner.as });
    const before = await scrape();
    const appendsBefore = sample(before, 'trellis_document_log_appends_total{source="client"}') ?? 0;
    const client = connectClient(t.url, tablesDocumentName(detail.body.id), { cookie: owner.cookie });
    await synced(client);
    insertRow(client.doc, { id: 'metrics-row', surfaceId: detail.body.primarySurface.id, data: { title: 'counted' } }, null);
    await acknowledged(client);
    const rest = await t.request('POST', '/api/workspaces/welcome/rows', { as: owner.as, body: { data: { title: 'by REST' } } });
    expect(rest.status).toBe(200);
    const during = await eventually(async () => {
      const text = await scrape();
      return (sample(text, 'trellis_document_commit_duration_seconds_count{outcome="committed"}') ?? 0) >= 2 ? text : null;
    });
    expect(sample(during, 'trellis_sync_connections')).toBe(1);
    expect(sample(during, 'trellis_documents_loaded')).toBeGreaterThanOrEqual(1);
    expect(sample(during, 'trellis_document_log_appends_total{source="client"}')).toBeGreaterThan(appendsBefore);
    expect(sample(during, 'trellis_document_log_appends_total{source="server"}')).toBeGreaterThanOrEqual(1);
    expect(sample(during, 'trellis_webhook_outbox_backlog')).toBe(0);
    expect(sample(during, 'trellis_redis_configured')).toBe(0);
    client.destroy();
    await eventually(async () => sample(await scrape(), 'trellis_sync_connections') === 0);
  });

  it('asks for the token when METRICS_TOKEN is set', async () => {
    t.services.config.metricsToken = 'a-metrics-token-of-some-length';
    try {
      expect((await t.request('GET', '/metrics')).status).toBe(401);
      expect((await t.request('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-of-some-length!!' } })).status).toBe(401);
      await scrape({ authorization: 'Bearer a-metrics-token-of-some-length' });
    } finally {
      t.services.config.metricsToken = undefined;
    }
  });
});
