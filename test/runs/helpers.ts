import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect } from 'vitest';
import * as Y from 'yjs';
import { startTestApp, type Credential, type TestAppOptions, type TestResponse } from '../helpers/app';
import { connectClient, type SyncClient } from '../helpers/sync';
import { mcpClient } from '../oauth/helpers';
import { signInUser, type TestUser } from '../workspaces/helpers';

export type RunsApp = {
  t: Awaited<ReturnType<typeof startTestApp>>;
  ada: TestUser;
  bob: TestUser;
  /** A sync client, destroyed with the app; `run` names the run its writes join. */
  connect(documentName: string, credential: { token?: string; cookie?: string }, run?: string): SyncClient;
  /** An MCP SDK client that has listed the tools (so the SDK checks every result against its output schema). */
  mcp(bearer: string): Promise<Client>;
  /** A REST call; `run` is sent as the Trellis-Run header. */
  call(method: string, path: string, as: Credential, body?: unknown, run?: string): Promise<TestResponse>;
};

/** One app per file with two signed-in people: ada (who makes the workspaces) and bob. */
export function useRunsApp(options: () => TestAppOptions = () => ({})): RunsApp {
  const clients: SyncClient[] = [];
  const tools: Client[] = [];
  const app = {
    connect(documentName, credential, run) {
      const client = connectClient(app.t.url, documentName, credential, run ? { run } : {});
      clients.push(client);
      return client;
    },
    async mcp(bearer) {
      const client = await mcpClient(app.t, bearer);
      tools.push(client);
      await client.listTools();
      return client;
    },
    call(method, path, as, body, run) {
      return app.t.request(method, path, { as, ...(body === undefined ? {} : { body }), ...(run ? { headers: { 'trellis-run': run } } : {}) });
    },
  } as RunsApp;
  beforeAll(async () => {
    app.t = await startTestApp(options());
    app.ada = await signInUser(app.t, 'ada@example.com');
    app.bob = await signInUser(app.t, 'bob@example.com');
  });
  afterAll(async () => {
    for (const client of clients) client.destroy();
    for (const client of tools) await client.close();
    await app.t.close();
    await app.t.store.dispose();
  });
  return app;
}

export async function ok(response: Promise<TestResponse> | TestResponse, status = 200): Promise<any> {
  const res = await response;
  expect(res.status, res.text).toBe(status);
  return res.body;
}

/** A tool's structured result, failing the test on an error result. */
export async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent;
}

/** The text of the n-th paragraph of a doc body as a sync client holds it (the documented layout: Y.XmlFragment `default`). */
export function paragraph(doc: Y.Doc, index: number): Y.XmlText {
  return (doc.getXmlFragment('default').get(index) as Y.XmlElement).get(0) as Y.XmlText;
}

export const bearerOf = (credential: Credential) => (credential as { bearer: string }).bearer;
