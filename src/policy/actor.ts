import type { Role } from '../model/roles';
import type { OAuthScope } from '../model/permissions';
import type { Principal } from '../model/schemas/common';
import type { RequestScope } from '../lib/run-scope';

/** The public shape of a user or agent, as every response shows it: one definition, in the model. */
export type { Principal };

/** What an OAuth access token adds to its user: which app holds it and what the user granted. */
export type OAuthCaller = {
  tokenId: string;
  grantId: string;
  clientId: string;
  clientName: string;
  scopes: readonly OAuthScope[];
};

/**
 * Who is calling, resolved once per request (or sync connection) from the
 * session cookie or the bearer credential. Policy decisions take this,
 * never raw headers.
 */
export type Actor = {
  principal: Principal;
  /** How the caller authenticated. Sensitive actions are for sessions only. */
  via: 'session' | 'key' | 'oauth';
  /** The human behind the call: the user itself, or the agent's owner. */
  userId: string;
  /** The organisation whose plan meters this caller. */
  orgId: string | null;
  sessionId?: string;
  sessionCreatedAt?: Date;
  /** `suggestOnly`: its doc and row writes can only be suggestions (docs/SUGGESTIONS.md). */
  key?: { id: string; role: Exclude<Role, 'owner'>; scopeWorkspaceId: string | null; suggestOnly: boolean };
  /** An OAuth access token: the user, capped by the scopes of its grant. */
  oauth?: OAuthCaller;
  /**
   * The request this actor acts in: its id for logs and the run its writes
   * join. Each HTTP request (and MCP tool call) has its own copy of the
   * actor with its own scope; absent outside a request (jobs, sync).
   */
  request?: RequestScope;
};

/** Stable identity for per-caller state (confirmations, idempotency keys): one key, one OAuth grant, or one principal. */
export function actorKey(actor: Actor): string {
  if (actor.key) return `key:${actor.key.id}`;
  if (actor.oauth) return `oauth:${actor.oauth.grantId}`;
  return `${actor.principal.principalType}:${actor.principal.id}`;
}
