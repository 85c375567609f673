import type { Actor, Principal } from '../policy/actor';
import type { Author } from '../model/schemas/common';
import { joinedRun, type RequestScope } from '../lib/run-scope';
import type { UpdateAuthor } from '../persistence/document-log';

/**
 * Every change to a Y document carries an origin that names who made it.
 * The shapes follow Hocuspocus's own: `{ source: 'connection', connection }`
 * for a sync client's update (its context holds the caller), `{ source:
 * 'local', context }` for changes the server makes (REST, MCP, system), and
 * `{ source: 'redis' }` for updates relayed from another instance, which
 * that instance has already logged and turned into events.
 */

export type ServerChangeContext = {
  /** A principal, or a public form for the rows it collects. */
  principal: Author;
  /** `replay`: a logged update derived again on a scratch copy (its events were never recorded). */
  via: 'rest' | 'mcp' | 'system' | 'replay';
  /** The run the change joins (docs/RUNS.md), null for none. */
  run: string | null;
  /** The HTTP request that made the change, named in the log line if it fails to commit. */
  requestId?: string;
};

export type ServerOrigin = { source: 'local'; context: ServerChangeContext };

/** What a sync connection carries from authentication to every message. */
export type ConnectionContext = {
  /** Null for an anonymous reader of a public or unlisted workspace (always read-only). */
  actor: Actor | null;
  workspaceId: string;
  /** Groups connections that share one access decision (same credential, same workspace). */
  accessKey: string;
  /** The presented credential, re-resolved on every access re-check; null when none was presented. */
  credential: { kind: 'bearer' | 'session'; token: string } | null;
  /**
   * May write only suggestions (a suggest-only key, a commenter): each update
   * is checked before it is logged (docs/SUGGESTIONS.md). Re-decided with
   * the connection's access.
   */
  suggestOnly?: boolean;
  /** The run named in the connection URL (`run`), checked at authentication; the connection's writes join it (docs/RUNS.md). */
  run?: string | null;
};

type ConnectionOrigin = { source: 'connection'; connection: { context: ConnectionContext } };

/** Changes the server makes on its own (cap enforcement, seeding without a known creator). */
export const SYSTEM_PRINCIPAL: Principal = { principalType: 'agent', id: 'system', name: 'Trellis', avatarUrl: null };

/**
 * The origin of a change the server makes on its own for `principal`: a
 * system change, or a logged update derived again (`replay`), which names
 * the run it joined. `via` has no default, so a caller's change cannot be
 * passed off as the server's by leaving it out: those take `callerOrigin`.
 */
export function serverOrigin(principal: Author, via: 'system' | 'replay', run: string | null = null): ServerOrigin {
  return { source: 'local', context: { principal, via, run } };
}

/** Who makes a change over REST or MCP: an actor, or a public form's author, which acts in no request. */
export type ChangeCaller = { principal: Author; request?: RequestScope };

/**
 * The origin of a change a caller makes over REST or MCP: it joins the run
 * the caller's request decided (src/lib/run-scope.ts) and names the request.
 */
export function callerOrigin(caller: ChangeCaller, via: ServerChangeContext['via'] = 'rest'): ServerOrigin {
  const { principal, request } = caller;
  const run = via === 'rest' || via === 'mcp' ? joinedRun(request, principal.id) : null;
  return { source: 'local', context: { principal, via, run, ...(request?.id ? { requestId: request.id } : {}) } };
}

export function isServerOrigin(origin: unknown): origin is ServerOrigin {
  return typeof origin === 'object' && origin !== null && (origin as ServerOrigin).source === 'local' && Boolean((origin as ServerOrigin).context?.principal);
}

/** An update another instance accepted, logged and judged, relayed here (src/sync/redis-relay.ts). */
export function isRelayedOrigin(origin: unknown): boolean {
  return typeof origin === 'object' && origin !== null && (origin as { source?: unknown }).source === 'redis';
}

export function isConnectionOrigin(origin: unknown): origin is ConnectionOrigin {
  return typeof origin === 'object' && origin !== null && (origin as ConnectionOrigin).source === 'connection';
}

/** The principal a change is attributed to, or null for changes relayed from elsewhere. */
export function principalOfOrigin(origin: unknown): Author | null {
  if (isServerOrigin(origin)) return origin.context.principal;
  if (isConnectionOrigin(origin)) return origin.connection.context?.actor?.principal ?? null;
  return null;
}

/** Sends a sync client a Hocuspocus stateless message on the connection a change came from; false when the origin has none. */
export function sendToConnection(origin: unknown, payload: string): boolean {
  if (!isConnectionOrigin(origin)) return false;
  const connection = origin.connection as { sendStateless?: (payload: string) => void };
  if (typeof connection.sendStateless !== 'function') return false;
  connection.sendStateless(payload);
  return true;
}

/** Who an update is attributed to in the log: a connection's caller, or a server change's principal (null for the system). */
export function authorOf(source: ConnectionContext | unknown): UpdateAuthor {
  const principal =
    source && typeof source === 'object' && 'actor' in source ? ((source as ConnectionContext).actor?.principal ?? null) : principalOfOrigin(source);
  if (!principal || principal.id === SYSTEM_PRINCIPAL.id) return null;
  return { principalType: principal.principalType, id: principal.id };
}
