import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { Credential } from '../helpers/app';

/** What the MCP tests share: the bearer of a key credential, and the JSON-RPC error a call rejects with. */

export const bearerOf = (credential: Credential) => (credential as { bearer: string }).bearer;

export async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}
