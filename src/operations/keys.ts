import { z } from 'zod';
import { workspaceResolver } from '../access/workspace-access';
import { listVisibleKeys, mintKey, revokeKey } from '../domain/keys';
import { requireElevation } from '../domain/elevation';
import { errors } from '../errors';
import type { Actor } from '../policy/actor';
import { requireCaller, requireHumanSession } from '../access/callers';
import type { KeyRecord } from '../persistence/keys';
import { IsoDateTime, Ok, OverLimitBody, Principal, toIso } from '../model/schemas/common';
import { ApiKey, KeyList, KeyRole, MintedKey } from '../model/schemas/keys';
import { defineOperation } from './operation';

const MintKeyRequest = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('What the key is for, e.g. "CI bot"'),
  agentName: z.string().trim().min(1).max(100).describe('The agent the key acts as; an existing agent of yours with this name is reused'),
  scopeSlug: z
    .string()
    .min(1)
    .max(100)
    .nullish()
    .describe('A workspace you are a member of: of your organisation, or of another one (its id when the slug is ambiguous); omit for an unscoped key'),
  role: KeyRole,
  suggestOnly: z
    .boolean()
    .optional()
    .describe("Limit the key to suggesting: its writes to docs and rows must be suggestions (`mode: \"suggest\"`), which an editor accepts or rejects; plain writes are 403 over REST, MCP and sync (docs/SUGGESTIONS.md)"),
  modelHint: z.string().trim().min(1).max(100).optional().describe('Free text shown in the agents overview, e.g. the model name'),
});

const KeyParams = z.object({ id: z.string().min(1).max(100) });

export function presentPrincipal(kind: 'user' | 'agent', id: string, name: string, avatarUrl: string | null): z.infer<typeof Principal> {
  return { principalType: kind, id, name, avatarUrl };
}

export function presentKey(key: KeyRecord): z.infer<typeof ApiKey> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopeSlug: key.scopeSlug,
    scopeWorkspaceId: key.scopeWorkspaceId,
    role: key.role,
    suggestOnly: key.suggestOnly,
    agent: presentPrincipal('agent', key.agentId, key.agentName, key.agentAvatarUrl),
    owner: presentPrincipal('user', key.ownerUserId, key.ownerName, key.ownerAvatarUrl),
    createdAt: toIso(key.createdAt)!,
    lastUsedAt: toIso(key.lastUsedAt),
    revokedAt: toIso(key.revokedAt),
  };
}

export const keyOperations = {
  mint: defineOperation(
    {
      body: MintKeyRequest, response: MintedKey,
      rest: {
        method: 'POST',
        path: '/api/keys',
        summary: 'Mint an API key (elevation: keys)',
        description:
          'Creates or reuses your agent `agentName` and answers 200 with the key and its `secret`, which is never shown again. ' +
          'The role is at most your own: your membership role in the scoped workspace, or your organisation role, and never owner. ' +
          'A scoped key enrols its agent in that workspace. A new agent identity needs a free agent slot on the plan (402 over_limit). ' +
          'Human sessions only, with a `keys` elevation (401 elevation_required otherwise); key callers get 403.',
        tags: ['keys'],
        responses: { 402: OverLimitBody },
      },
    },
    async (services, actor, { body }) => {
      const caller = requireCaller(actor);
      await requireElevation(services, caller, 'keys');
      const { scopeSlug, ...input } = body;
      const minted = await mintKey(services, workspaceResolver(services), caller, { ...input, scopeSlug: scopeSlug ?? undefined });
      return { key: presentKey(minted.key), secret: minted.secret };
    },
  ),
  list: defineOperation(
    {
      response: KeyList,
      rest: {
        method: 'GET',
        path: '/api/keys',
        summary: 'List API keys',
        description:
          'Your keys in your organisation, including revoked ones, newest first; the organisation owner sees every key of the organisation. ' +
          'Secrets and their hashes are never returned. Sessions only: keys and tokens get 403.',
        tags: ['keys'],
      },
    },
    async (services, actor) => {
      const caller = requireCaller(actor);
      requireHumanSession(caller);
      const keys = await listVisibleKeys(services, caller);
      return { keys: keys.map(presentKey) };
    },
  ),
  revoke: defineOperation(
    {
      params: KeyParams, response: Ok,
      rest: {
        method: 'DELETE',
        path: '/api/keys/:id',
        summary: 'Revoke an API key',
        description:
          'Takes effect at once: the next request with the key is 401. Allowed to the key\'s owner and the organisation owner; ' +
          'a key may also revoke itself. Revoking an agent\'s last live key frees its plan slot. Idempotent.',
        tags: ['keys'],
        config: { capExempt: true },
      },
    },
    async (services, actor, { params }) => {
      await revokeKey(services, requireCaller(actor), params.id);
      return { ok: true as const };
    },
  ),
};
