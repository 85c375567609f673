/**
 * The MCP endpoint against the REST route it wraps (issue 11): the same
 * row create and row list through POST /api/mcp (a fresh SDK server per
 * request, JSON-RPC, metering per tool call) and through REST, with the
 * same API key. Prints figures; asserts nothing.
 */
import { request as undiciRequest } from 'undici';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { insertKey, signInUser } from '../test/workspaces/helpers';
import { percentile, round, timeEach } from './tables';

type Figures = Record<string, number | string>;

export async function runMcpBench(): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const user = await signInUser(t, 'mcp-bench@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const key = (await insertKey(t, user, { role: 'editor' })).as as { bearer: string };
    const restHeaders = { 'content-type': 'application/json', authorization: `Bearer ${key.bearer}` };
    const mcpHeaders = { ...restHeaders, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    const rest = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await undiciRequest(`${t.url}${path}`, { method, headers: restHeaders, body: body === undefined ? undefined : JSON.stringify(body) });
      if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
      await res.body.text();
    };
    const tool = async (name: string, args: Record<string, unknown>) => {
      const res = await undiciRequest(`${t.url}/api/mcp`, {
        method: 'POST',
        headers: mcpHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200 || text.includes('"isError":true')) throw new Error(`${name} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    };
    for (let i = 0; i < 50; i++) {
      await rest('POST', '/api/workspaces/welcome/rows', { data: { title: `warm ${i}` } });
      await tool('create_row', { slug: 'welcome', data: { title: `warm ${i}` } });
    }
    const restCreate = await timeEach(300, (i) => rest('POST', '/api/workspaces/welcome/rows', { data: { title: `rest ${i}`, status: 'todo' } }));
    const mcpCreate = await timeEach(300, (i) => tool('create_row', { slug: 'welcome', data: { title: `mcp ${i}`, status: 'todo' } }));
    const restList = await timeEach(100, () => rest('GET', '/api/workspaces/welcome/rows?limit=100'));
    const mcpList = await timeEach(100, () => tool('list_rows', { slug: 'welcome', limit: 100 }));
    const listTools = await timeEach(100, async () => {
      const res = await undiciRequest(`${t.url}/api/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      await res.body.text();
    });
    return {
      'create_row over MCP p50 / p99 (ms)': `${round(percentile(mcpCreate, 50))} / ${round(percentile(mcpCreate, 99))}`,
      'POST /rows over REST p50 / p99 (ms)': `${round(percentile(restCreate, 50))} / ${round(percentile(restCreate, 99))}`,
      'list_rows (100 rows) over MCP p50 (ms)': round(percentile(mcpList, 50)),
      'GET /rows?limit=100 over REST p50 (ms)': round(percentile(restList, 50)),
      'tools/list p50 (ms)': round(percentile(listTools, 50)),
    };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}
