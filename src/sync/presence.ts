import type { Connection, Document, Extension, Hocuspocus, connectedPayload, onAwarenessUpdatePayload, onConfigurePayload, onDisconnectPayload } from '@hocuspocus/server';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { INSTANCE_ID } from '../lib/instance';
import { closeRedis, openRedis } from '../lib/redis';
import type { Principal } from '../policy/actor';
import type { ConnectionContext } from './origins';

/**
 * Who has a document open (docs/SYNC.md, "Presence"): the sync clients'
 * principals, from the connections Hocuspocus holds and the awareness
 * states they share. System and direct connections (the engine's own) are
 * not presence, nor are anonymous readers of a public workspace (they are no
 * principal).
 *
 * With Redis, awareness is relayed only between instances that both have a
 * document loaded, so presence cannot be read off the local awareness: each
 * instance writes its own part into a Redis hash per document (a field per
 * instance, JSON with the time it was written), on every connect, disconnect
 * and awareness change, and again on a heartbeat. A reader takes its own
 * part live and the others' from the hash, ignoring any not refreshed within
 * the TTL (an instance that died without cleaning up).
 */

/** What a client shares in its awareness state that says where it is: the web app's table cell, or y-prosemirror's cursor. */
export type RawCursor =
  | { cell: { surfaceId: string; rowId: string; key: string } }
  /** Y relative positions as JSON (`Y.relativePositionToJSON`), in the doc body. */
  | { anchor: unknown; head: unknown };

export type PresentPrincipal = {
  principal: Principal;
  /** For an agent key: the user who owns it (the actor's `userId`). */
  ownerUserId: string | null;
  /** When the earliest of its open connections opened (ms since the epoch). */
  since: number;
  connections: number;
  /** Of its most recently opened connection that shares one. */
  cursor?: RawCursor;
};

/** What the domain asks (src/domain/presence.ts); bootstrap hands in one of the two below. */
export interface PresenceSource {
  /** Every principal with the document open, on any instance, one entry each. */
  present(documentName: string): Promise<PresentPrincipal[]>;
  close(): Promise<void>;
}

type Entry = PresentPrincipal & { cursorSince?: number };

/**
 * This instance's part: a Hocuspocus extension that notes when each
 * connection opened and tells a listener (the Redis source) which
 * documents' presence changed.
 */
export class LocalPresence implements Extension, PresenceSource {
  readonly extensionName = 'trellis-presence';
  private readonly opened = new WeakMap<Connection, number>();
  private hocuspocus: Hocuspocus | null = null;
  private listener: ((documentName: string) => void) | null = null;

  async onConfigure({ instance }: onConfigurePayload) {
    this.hocuspocus = instance;
  }

  async connected({ connection, documentName }: connectedPayload) {
    this.opened.set(connection, Date.now());
    this.listener?.(documentName);
  }

  async onDisconnect({ documentName }: onDisconnectPayload) {
    this.listener?.(documentName);
  }

  async onAwarenessUpdate({ documentName, connection }: onAwarenessUpdatePayload) {
    // Only this instance's clients: awareness relayed from a peer is that peer's to report.
    if (connection) this.listener?.(documentName);
  }

  /** Called with a document's name whenever who is here, or where, may have changed. */
  whenChanged(listener: (documentName: string) => void) {
    this.listener = listener;
  }

  /** Documents this instance has sync clients on. */
  documentsWithClients(): string[] {
    if (!this.hocuspocus) return [];
    return [...this.hocuspocus.documents.entries()].filter(([, document]) => document.getConnections().length > 0).map(([name]) => name);
  }

  async present(documentName: string): Promise<PresentPrincipal[]> {
    return withoutBookkeeping(this.here(documentName));
  }

  /** The principals of this instance's connections to the document. */
  here(documentName: string): Entry[] {
    const document = this.hocuspocus?.documents.get(documentName);
    if (!document) return [];
    const byPrincipal = new Map<string, Entry>();
    for (const connection of document.getConnections()) {
      const context = connection.context as (ConnectionContext & { system?: boolean }) | undefined;
      const actor = context?.actor;
      if (!actor || context.system) continue;
      let since = this.opened.get(connection);
      // Seen before its `connected` hook ran: from now on, so the answer does not move.
      if (since === undefined) this.opened.set(connection, (since = Date.now()));
      const cursor = cursorOf(document, connection);
      add(byPrincipal, {
        principal: actor.principal,
        // An agent's `userId` is its owner's (src/policy/actor.ts).
        ownerUserId: actor.principal.principalType === 'agent' ? actor.userId : null,
        since,
        connections: 1,
        ...(cursor ? { cursor, cursorSince: since } : {}),
      });
    }
    return [...byPrincipal.values()];
  }

  async close() {}
}

/** The newest awareness state of the connection's clients that says where it is. */
function cursorOf(document: Document, connection: Connection): RawCursor | undefined {
  const states = document.awareness.getStates();
  let found: RawCursor | undefined;
  for (const clientId of document.getClients(connection)) {
    const state = states.get(clientId) as Record<string, unknown> | undefined;
    if (!state) continue;
    const cell = state.cell as Record<string, unknown> | null | undefined;
    if (cell && typeof cell.surfaceId === 'string' && typeof cell.rowId === 'string' && typeof cell.key === 'string') {
      found = { cell: { surfaceId: cell.surfaceId, rowId: cell.rowId, key: cell.key } };
    }
    const cursor = state.cursor as Record<string, unknown> | null | undefined;
    if (cursor && typeof cursor === 'object' && cursor.anchor && cursor.head) found = { anchor: cursor.anchor, head: cursor.head };
  }
  return found;
}

/** Folds one principal's connection (or one instance's entry for it) into the others. */
function add(into: Map<string, Entry>, entry: Entry) {
  const key = `${entry.principal.principalType}:${entry.principal.id}`;
  const known = into.get(key);
  if (!known) {
    into.set(key, { ...entry });
    return;
  }
  known.connections += entry.connections;
  known.since = Math.min(known.since, entry.since);
  if (entry.cursor && (known.cursorSince === undefined || (entry.cursorSince ?? 0) > known.cursorSince)) {
    known.cursor = entry.cursor;
    known.cursorSince = entry.cursorSince;
  }
}

function withoutBookkeeping(entries: Iterable<Entry>): PresentPrincipal[] {
  return [...entries].map(({ cursorSince: _, ...entry }) => entry).sort((a, b) => a.since - b.since || a.principal.id.localeCompare(b.principal.id));
}

/** An instance's part of a document's presence as stored in Redis. */
type StoredPart = { at: number; present: Entry[] };

/** How soon after a change this instance's part is written (a burst of cursor moves is one write). */
const WRITE_DELAY_MS = 100;

export type RedisPresenceOptions = { redisUrl: string; prefix: string; ttlSeconds: number; log: Logger };

/**
 * Presence across instances sharing Redis: `<prefix>presence:<document>` is
 * a hash of each instance's part. The key itself expires after two TTLs
 * without a write, so a document everyone left on instances that died
 * leaves nothing behind.
 */
export class RedisPresence implements PresenceSource {
  private readonly redis: Redis;
  private readonly dirty = new Set<string>();
  /** Per document this instance has a part for: what the part lists, as written (JSON), to skip writes that change nothing. */
  private readonly written = new Map<string, string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly local: LocalPresence,
    private readonly options: RedisPresenceOptions,
  ) {
    this.redis = openRedis(options.redisUrl);
    // Back from an outage: what changed meanwhile was not written.
    this.redis.on('ready', () => this.refreshAll());
    local.whenChanged((name) => this.changed(name));
    this.heartbeat = setInterval(() => this.refreshAll(), (options.ttlSeconds * 1000) / 3).unref();
  }

  async present(documentName: string): Promise<PresentPrincipal[]> {
    const merged = new Map<string, Entry>();
    for (const entry of this.local.here(documentName)) add(merged, entry);
    let parts: Record<string, string> = {};
    try {
      if (this.redis.status === 'ready') parts = await this.redis.hgetall(this.key(documentName));
    } catch (error) {
      this.options.log.warn({ err: error, documentName }, 'presence: could not read the other instances’ part; answering with this one’s');
    }
    const oldest = Date.now() - this.options.ttlSeconds * 1000;
    for (const [instance, json] of Object.entries(parts)) {
      if (instance === INSTANCE_ID) continue;
      const part = parsePart(json);
      if (!part || part.at < oldest) continue;
      for (const entry of part.present) add(merged, entry);
    }
    return withoutBookkeeping(merged.values());
  }

  async close() {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.flushTimer);
    // Leaving on purpose: the others need not wait for the TTL.
    if (this.redis.status === 'ready') {
      await Promise.all([...this.written.keys()].map((name) => this.redis.hdel(this.key(name), INSTANCE_ID))).catch(() => {});
    }
    await closeRedis(this.redis);
  }

  private changed(documentName: string) {
    if (this.closed) return;
    this.dirty.add(documentName);
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      const names = [...this.dirty];
      this.dirty.clear();
      void this.write(names, false);
    }, WRITE_DELAY_MS);
  }

  private refreshAll() {
    if (this.closed) return;
    // A heartbeat: every part is written again, changed or not, so its time stays fresh.
    void this.write([...new Set([...this.written.keys(), ...this.local.documentsWithClients()])], true);
  }

  /**
   * Writes this instance's part of each document; unless `refresh`, only the
   * parts whose list changed (a caret move in a field presence does not
   * read, an awareness update per keystroke, writes nothing).
   */
  private async write(names: string[], refresh: boolean) {
    if (this.redis.status !== 'ready' || names.length === 0) return;
    const ttlMs = this.options.ttlSeconds * 1000;
    const parts = names
      .map((name) => {
        const present = this.local.here(name);
        return { name, present, listed: JSON.stringify(present) };
      })
      .filter(({ name, present, listed }) => (present.length === 0 ? this.written.has(name) : refresh || this.written.get(name) !== listed));
    if (parts.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const { name, present } of parts) {
      if (present.length === 0) pipeline.hdel(this.key(name), INSTANCE_ID);
      else {
        const part: StoredPart = { at: Date.now(), present };
        pipeline.hset(this.key(name), INSTANCE_ID, JSON.stringify(part));
        pipeline.pexpire(this.key(name), 2 * ttlMs);
      }
    }
    try {
      await pipeline.exec();
    } catch (error) {
      // Redis is away: once it is back (`ready`) every part is written again.
      this.options.log.warn({ err: error }, 'presence: could not write this instance’s part to Redis');
      return;
    }
    for (const { name, present, listed } of parts) {
      if (present.length === 0) this.written.delete(name);
      else this.written.set(name, listed);
    }
  }

  private key(documentName: string) {
    return `${this.options.prefix}presence:${documentName}`;
  }
}

function parsePart(json: string): StoredPart | null {
  try {
    const part = JSON.parse(json) as StoredPart;
    return typeof part.at === 'number' && Array.isArray(part.present) ? part : null;
  } catch {
    return null;
  }
}
