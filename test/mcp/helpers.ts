import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { Credential, TestApp } from '../helpers/app';
import { mcpClient } from '../oauth/helpers';

/** What the MCP tests share: the bearer of a key credential, the JSON-RPC error a call rejects with, a refused call's body. */

export const bearerOf = (credential: Credential) => (credential as { bearer: string }).bearer;

export async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

export type ToolResult = Awaited<ReturnType<Client['callTool']>>;

/** The REST error body and status an `isError` result carries. */
export function refusal(result: ToolResult) {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { error: { code: string; message: string }; status: number };
}

/** An SDK client that has listed the tools, so the SDK checks every structuredContent against its tool's outputSchema; closed by `closeAll`. */
export function checkedClients(t: () => TestApp) {
  const opened: Client[] = [];
  return {
    async open(bearer: string) {
      const client = await mcpClient(t(), bearer);
      opened.push(client);
      await client.listTools();
      return client;
    },
    async closeAll() {
      for (const client of opened) await client.close();
    },
  };
}
