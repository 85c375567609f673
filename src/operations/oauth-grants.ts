import { z } from 'zod';
import { requireCaller, requireHumanSession } from '../access/callers';
import { listUserGrants, revokeAllUserGrants, revokeUserGrant } from '../domain/oauth';
import { errors } from '../errors';
import { IsoDateTime, Ok } from '../model/schemas/common';
import type { Actor } from '../policy/actor';
import { GrantList } from '../model/schemas/account';
import { defineOperation } from './operation';



/** The apps a person has authorized over OAuth (docs/OAUTH.md), and revoking them. */
/** Grants are managed by the person who gave them, in the browser: apps and keys get 403, so an app cannot list or revoke others. */
function sessionCaller(actor: Actor | null): Actor {
  const caller = requireCaller(actor);
  requireHumanSession(caller);
  return caller;
}

export const oauthGrantOperations = {
  list: defineOperation(
    {
      response: GrantList,
      rest: {
        method: 'GET',
        path: '/api/me/oauth-grants',
        summary: 'Apps you have authorized',
        description: 'Live grants (not revoked, not lapsed), newest first. Sessions only: apps and keys get 403.',
        tags: ['oauth'],
      },
    },
    async (services, actor) => {
      const grants = await listUserGrants(services, sessionCaller(actor));
      return {
        grants: grants.map((grant) => ({
          id: grant.id,
          client: { id: grant.clientId, name: grant.clientName, uri: typeof grant.clientMetadata.client_uri === 'string' ? grant.clientMetadata.client_uri : null },
          scopes: grant.scopeList,
          createdAt: grant.createdAt.toISOString(),
          lastUsedAt: grant.lastUsedAt?.toISOString() ?? null,
          expiresAt: grant.expiresAt.toISOString(),
        })),
      };
    },
  ),
  revoke: defineOperation(
    {
      params: z.object({ id: z.string().min(1).max(100) }),
      response: Ok,
      rest: {
        method: 'DELETE',
        path: '/api/me/oauth-grants/:id',
        summary: "Revoke an app's access",
        description: 'Its tokens stop working at once; its open sync connections and event streams close within a second. Records `oauth.grant_revoked`.',
        tags: ['oauth'],
        config: { capExempt: true },
      },
    },
    async (services, actor, { params }) => {
      await revokeUserGrant(services, sessionCaller(actor), params.id);
      return { ok: true as const };
    },
  ),
  revokeAll: defineOperation(
    {
      response: z.object({ revokedGrants: z.number().int() }),
      rest: { method: 'DELETE', path: '/api/me/oauth-grants', summary: 'Revoke every app you have authorized', tags: ['oauth'], config: { capExempt: true } },
    },
    async (services, actor) => ({ revokedGrants: await revokeAllUserGrants(services, sessionCaller(actor)) }),
  ),
};
