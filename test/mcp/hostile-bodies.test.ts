import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { insertKey, signInUser } from '../workspaces/helpers';
import { mcpClient } from '../oauth/helpers';
import { bearerOf } from './helpers';

/**
 * Issue 22 item 4: JSON-RPC bodies an attacker or a broken client may send.
 * An id that is not a string, an integer or null is -32600 with `id: null`
 * (JSON-RPC 2.0 §5: the id could not be determined); nothing answers 500.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let headers: Record<string, string>;

beforeAll(async () => {
  t = await startTestApp();
  const owner = await signInUser(t, 'mcp-hostile@example.com');
  const key = await insertKey(t, owner, { role: 'editor', agentName: 'hostile' });
  headers = { accept: 'application/json, text/event-stream', authorization: `Bearer ${bearerOf(key.as)}`, 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18' };
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const post = (rawBody: string) => t.request('POST', '/api/mcp', { headers, rawBody });
const message = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`;

describe('JSON-RPC ids', () => {
  it('an id that is not a string, an integer or null is -32600 with id null, never 500', async () => {
    const bad = ['1e400', '-1e400', '1.5', '0.1', '1e308', '18446744073709551616123456789012345678901234567890', '{}', '{"__proto__":{"x":1}}', '[]', '[1]', 'true', 'false'];
    for (const id of bad) {
      const res = await post(message(id));
      expect(res.status, id).toBe(400);
      expect(res.body, id).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.any(String) } });
      expect(res.text, id).not.toMatch(/\n\s+at \S+ \(/);
    }
  });

  it('a string, an integer or null id is answered under that id', async () => {
    for (const [raw, id] of [['"a"', 'a'], ['7', 7], ['-3', -3], ['0', 0], ['""', ''], ['1e3', 1000]] as const) {
      const res = await post(message(raw));
      expect(res.status, raw).toBe(200);
      expect(res.body.id, raw).toBe(id);
      expect(Array.isArray(res.body.result.tools), raw).toBe(true);
    }
  });

  it('a batch with a hostile id, hostile batches and bodies answer 400, never 500', async () => {
    const bodies = [
      `[${message('1e400')}]`,
      `[${message('1')},${message('1.5')}]`,
      '[]',
      '[[]]',
      '[1,2,3]',
      '["x"]',
      'null',
      '1e400',
      '"just a string"',
      '{"jsonrpc":"2.0","id":1,"method":{"__proto__":{"x":1}}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","__proto__":{"id":1e400}}',
      '{"__proto__":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_workspaces","arguments":{"__proto__":{"x":1}}}}',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      `{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}`,
      `[${Array.from({ length: 101 }, (_, i) => message(String(i))).join(',')}]`,
    ];
    for (const body of bodies) {
      const res = await post(body);
      expect(res.status, body.slice(0, 80)).toBeLessThan(500);
      expect(res.body?.jsonrpc, body.slice(0, 80)).toBe('2.0');
      // A 400 names the request's id only when it is a valid one.
      if (res.status === 400) expect([null, 1], body.slice(0, 80)).toContain(res.body.id);
      expect(res.text, body.slice(0, 80)).not.toMatch(/\n\s+at \S+ \(/);
    }
  });

  it('the SDK client still works after hostile bodies', async () => {
    const client = await mcpClient(t, headers.authorization!.slice('Bearer '.length));
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    await client.close();
  });
});
