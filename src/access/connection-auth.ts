import type { Hocuspocus, onAuthenticatePayload } from '@hocuspocus/server';
import type { Actor } from '../policy/actor';
import { actorFromBearer, actorFromSessionToken, SESSION_COOKIE } from './callers';
import { loadCallerFacts } from '../persistence/access';
import { findLiveSurfaceById, findWorkspaceById } from '../persistence/workspaces';
import { syncRights, workspaceAccess, type SyncRights } from '../policy/index';
import type { Services } from '../domain/services';
import { mayUseSessionCookie } from './cookie-origins';
import { parseDocumentName, type ParsedDocumentName } from '../model/document-names';
import type { ConnectionGate } from '../sync/connection-gate';
import type { ConnectionContext } from '../sync/origins';
import { ApiError } from '../errors';

/** Typed close codes, as Hocuspocus uses them: the client can tell why it was dropped. */
export const CLOSE_UNAUTHORIZED = { code: 4401, reason: 'unauthorized' };
export const CLOSE_FORBIDDEN = { code: 4403, reason: 'forbidden' };
/** The run the connection named has ended (docs/RUNS.md): reconnect naming another, or none. */
export const CLOSE_RUN_ENDED = { code: 4409, reason: 'run_ended' };

const RECHECK_INTERVAL_MS = 500;

/**
 * The sync engine's gate (`ConnectionGate` in src/sync/connection-gate.ts), handed to
 * it at bootstrap: authentication with a one-second decision cache, and the
 * monitor that re-decides open connections twice a second.
 */
export class SyncConnectionGate implements ConnectionGate {
  private readonly decisions = new DecisionCache();
  private monitor: ConnectionAccessMonitor | undefined;

  constructor(private readonly services: Services) {}

  authenticate(payload: onAuthenticatePayload): Promise<ConnectionContext> {
    return authenticateConnection(this.services, payload, this.decisions);
  }

  assertStillAllowed(connection: unknown) {
    this.monitor?.assertStillAllowed(connection);
  }

  /**
   * The run named in the connection URL (re-checked at most once a second:
   * an ended run closes the connection with 4409 `run_ended`, nothing of the
   * update logged), else the automatic run of a key or OAuth app, else none.
   */
  async runOf(connection: unknown): Promise<string | null> {
    const context = (connection as { context?: ConnectionContext }).context;
    if (!context?.actor) return null;
    if (context.run) {
      if (await this.services.runs.stillOpen(context.run)) return context.run;
      throw { code: CLOSE_RUN_ENDED.code, reason: CLOSE_RUN_ENDED.reason };
    }
    if (context.actor.via === 'session') return null;
    return (await this.services.runs.automaticRun(context.actor, context.workspaceId)).id;
  }

  start(hocuspocus: () => Hocuspocus) {
    this.monitor ??= new ConnectionAccessMonitor(this.services, hocuspocus);
    this.monitor.start();
  }

  stop() {
    this.monitor?.stop();
  }
}

/** Hocuspocus sends `reason` to the provider's onAuthenticationFailed. */
class SyncAccessError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}


function credentialOf(services: Services, token: string | undefined, headers: Headers): ConnectionContext['credential'] | null {
  if (token) return { kind: 'bearer', token };
  // A handshake from another site's page (browsers always name it) does not get the person's session.
  if (!mayUseSessionCookie(services.config, { origin: headers.get('origin'), host: headers.get('host') })) return null;
  const cookie = headers.get('cookie') ?? '';
  const match = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]+)`).exec(cookie);
  return match ? { kind: 'session', token: decodeURIComponent(match[1]!) } : null;
}

async function actorFor(services: Services, credential: NonNullable<ConnectionContext['credential']>): Promise<Actor | null> {
  return credential.kind === 'bearer' ? actorFromBearer(services, credential.token) : actorFromSessionToken(services, credential.token);
}

/** The policy's answer for one caller on one document (`syncRights`, over the same `can` REST uses). */
async function decide(services: Services, actor: Actor | null, document: ParsedDocumentName): Promise<SyncRights> {
  const workspace = await findWorkspaceById(services.db, document.workspaceId);
  if (!workspace) return NO_ACCESS;
  if (document.surfaceId && !(await findLiveSurfaceById(services.db, workspace.id, document.surfaceId))) return NO_ACCESS;
  const facts = (await loadCallerFacts(services.db, actor, [workspace])).get(workspace.id)!;
  return syncRights(workspaceAccess(facts, workspace), workspace, document.kind);
}

const NO_ACCESS: SyncRights = { read: false, write: false, suggest: false };

/** What a connection may send: nothing (read-only), anything its role allows, or suggestions only. */
function applyDecision(connection: { readOnly: boolean }, context: ConnectionContext, decision: SyncRights) {
  connection.readOnly = !decision.write && !decision.suggest;
  context.suggestOnly = decision.suggest;
}

/**
 * Connections that present the same credential for the same document within
 * a second share one decision: a thousand tabs (or benchmark clients)
 * opening one document cost one lookup. The monitor re-decides twice a
 * second anyway, so the cache adds no staleness beyond the guarantee.
 */
export class DecisionCache {
  private readonly entries = new Map<string, { at: number; value: Promise<{ actor: Actor | null; decision: SyncRights }> }>();
  constructor(private readonly ttlMs = 1000) {}

  get(key: string, load: () => Promise<{ actor: Actor | null; decision: SyncRights }>) {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    if (this.entries.size > 10_000) this.entries.clear();
    const value = load();
    this.entries.set(key, { at: now, value });
    value.catch(() => this.entries.delete(key));
    return value;
  }
}

/**
 * Hocuspocus `onAuthenticate`: the provider's token is an API key (or OAuth
 * token), or empty in a browser that sends the session cookie. No read
 * access rejects the connection; read without write makes it read-only,
 * so Hocuspocus discards its updates.
 */
export async function authenticateConnection(
  services: Services,
  payload: onAuthenticatePayload,
  cache: DecisionCache = new DecisionCache(0),
): Promise<ConnectionContext> {
  const document = parseDocumentName(payload.documentName);
  if (!document) throw new SyncAccessError(CLOSE_FORBIDDEN.reason);
  // No credential reads like an anonymous REST caller: public and unlisted workspaces, read-only.
  const credential = credentialOf(services, payload.token, payload.requestHeaders);
  const { actor, decision } = await cache.get(`${accessKeyOf(credential)}\u0000${payload.documentName}`, async () => {
    const found = credential ? await actorFor(services, credential) : null;
    if (credential && !found) return { actor: null, decision: NO_ACCESS };
    return { actor: found, decision: await decide(services, found, document) };
  });
  if (credential && !actor) throw new SyncAccessError(CLOSE_UNAUTHORIZED.reason);
  if (!decision.read) throw new SyncAccessError(actor ? CLOSE_FORBIDDEN.reason : CLOSE_UNAUTHORIZED.reason);
  const context: ConnectionContext = { actor, workspaceId: document.workspaceId, accessKey: accessKeyOf(credential), credential };
  applyDecision(payload.connectionConfig, context, decision);
  context.run = await namedRun(services, actor, document.workspaceId, payload.requestParameters.get('run'));
  return context;
}

/** The run a connection names in its URL (`?run=`): the caller's own open run in the document's workspace, or the connection is refused with `run_not_found` or `run_ended`. */
async function namedRun(services: Services, actor: Actor | null, workspaceId: string, run: string | null): Promise<string | null> {
  if (!run) return null;
  if (!actor) throw new SyncAccessError('run_not_found');
  try {
    await services.runs.writable(actor.principal.id, workspaceId, run);
    return run;
  } catch (error) {
    if (error instanceof ApiError) throw new SyncAccessError(error.code);
    throw error;
  }
}

function accessKeyOf(credential: ConnectionContext['credential']): string {
  return credential ? `${credential.kind}:${credential.token}` : 'anonymous';
}

type LiveConnection = {
  context: ConnectionContext;
  readOnly: boolean;
  document: { name: string };
  close(event?: { code: number; reason: string }): void;
  webSocket?: { close(code?: number, reason?: string): void };
};

/**
 * Re-checks open connections twice a second, so a revoked key, an ended
 * session, a removed member or a lowered role takes effect within a second.
 * Connections sharing a credential and document are decided once.
 */
export class ConnectionAccessMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly revoked = new WeakSet<object>();

  constructor(
    private readonly services: Services,
    private readonly hocuspocus: () => Hocuspocus,
  ) {}

  start() {
    this.timer = setInterval(() => void this.recheck(), RECHECK_INTERVAL_MS).unref();
  }

  stop() {
    clearInterval(this.timer);
  }

  /** Called before every message: a connection found revoked handles nothing more. */
  assertStillAllowed(connection: unknown) {
    if (this.revoked.has(connection as object)) throw new SyncAccessError(CLOSE_FORBIDDEN.reason);
  }

  async recheck() {
    if (this.running) return;
    this.running = true;
    try {
      const groups = new Map<string, LiveConnection[]>();
      for (const document of this.hocuspocus().documents.values()) {
        for (const connection of document.getConnections() as unknown as LiveConnection[]) {
          const context = connection.context;
          if (!context?.accessKey) continue;
          const key = `${context.accessKey}\u0000${document.name}`;
          groups.set(key, [...(groups.get(key) ?? []), connection]);
        }
      }
      for (const connections of groups.values()) await this.apply(connections);
    } catch (error) {
      this.services.log.warn({ err: error }, 'sync access re-check failed');
    } finally {
      this.running = false;
    }
  }

  private async apply(connections: LiveConnection[]) {
    const first = connections[0]!;
    const document = parseDocumentName(first.document.name);
    const credential = first.context.credential;
    const actor = credential ? await actorFor(this.services, credential) : null;
    if ((credential && !actor) || !document) return this.closeAll(connections, CLOSE_UNAUTHORIZED, true);
    const decision = await decide(this.services, actor, document);
    if (!decision.read) return this.closeAll(connections, CLOSE_FORBIDDEN, false);
    for (const connection of connections) applyDecision(connection, connection.context, decision);
  }

  private closeAll(connections: LiveConnection[], event: { code: number; reason: string }, dropSocket: boolean) {
    for (const connection of connections) {
      this.revoked.add(connection);
      connection.close(event);
      // A dead credential ends the whole socket (it may multiplex other documents with the same token).
      if (dropSocket) connection.webSocket?.close(event.code, event.reason);
    }
  }
}
