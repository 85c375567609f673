import { z } from 'zod';
import { requireCaller } from '../access/callers';
import { listUserGrants, revokeAllUserGrants, revokeUserGrant } from '../domain/oauth';
import { errors } from '../errors';
import { IsoDateTime, Ok } from '../model/schemas/common';
import type { Actor } from '../policy/actor';
import { OAUTH_SCOPES } from '../policy/permissions';
import { defineOperation } from './operation';

const Grant = z
  .object({
    id: z.string(),
    client: z.object({ id: z.string(), name: z.string(), uri: z.string().nullable() }),
    scopes: z.array(z.enum(OAUTH_SCOPES)),
    createdAt: IsoDateTime,
    lastUsedAt: IsoDateTime.nullable(),
    expiresAt: IsoDateTime.describe('When the grant lapses unless the app refreshes its tokens before'),
  })
  .meta({ id: 'OAuthGrant' });

/**
 * Grants are managed by the person who gave them, in the browser: apps and
 * keys get 403, so an app cannot list or revoke others. (The same check as
 * the key routes' `requireHumanSession`, which lives in src/api/keys.ts,
 * out of reach of operations.)
 */
function requireSession(actor: Actor | null): Actor {
  const caller = requireCaller(actor);
  if (caller.via !== 'session') throw errors.forbidden('This action is for people signed in with a session, not API keys or tokens.');
  return caller;
}

/** The apps a person has authorized over OAuth (docs/OAUTH.md), and revoking them. */
export const oauthGrantOperations = {
  list: defineOperation(
    {
      response: z.object({ grants: z.array(Grant) }),
      rest: {
        method: 'GET',
        path: '/api/me/oauth-grants',
        summary: 'Apps you have authorized',
        description: 'Live grants (not revoked, not lapsed), newest first. Sessions only: apps and keys get 403.',
        tags: ['oauth'],
      },
    },
    async (services, actor) => {
      const grants = await listUserGrants(services, requireSession(actor));
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
      await revokeUserGrant(services, requireSession(actor), params.id);
      return { ok: true as const };
    },
  ),
  revokeAll: defineOperation(
    {
      response: z.object({ revokedGrants: z.number().int() }),
      rest: { method: 'DELETE', path: '/api/me/oauth-grants', summary: 'Revoke every app you have authorized', tags: ['oauth'], config: { capExempt: true } },
    },
    async (services, actor) => ({ revokedGrants: await revokeAllUserGrants(services, requireSession(actor)) }),
  ),
};
