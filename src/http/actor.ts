import type { Role } from '../persistence/schema';

/** The public shape of a user or agent, as every response shows it. */
export type Principal = {
  principalType: 'user' | 'agent';
  id: string;
  name: string;
  avatarUrl: string | null;
};

/**
 * Who is calling, resolved once per request from the session cookie or the
 * bearer credential. Policy decisions take this, never raw headers.
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
  key?: { id: string; role: Exclude<Role, 'owner'>; scopeWorkspaceId: string | null };
};

/** Stable identity for per-caller state (idempotency keys, write rate limits). */
export function actorKey(actor: Actor): string {
  return actor.key ? `key:${actor.key.id}` : `${actor.principal.principalType}:${actor.principal.id}`;
}
