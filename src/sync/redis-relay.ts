import type { Document, Extension, afterLoadDocumentPayload, afterUnloadDocumentPayload } from '@hocuspocus/server';
import type { Redis } from 'ioredis';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { Logger } from 'pino';
import { applyAwarenessUpdate, encodeAwarenessUpdate } from 'y-protocols/awareness';
import * as Y from 'yjs';
import { INSTANCE_ID } from '../lib/instance';
import { bothReady, closePubSub, onBothReady, openPubSub } from '../lib/redis';
import type { Metrics } from '../metrics/index';
import { isConnectionOrigin, isServerOrigin } from './origins';

/**
 * Sync fan-out between instances that share Postgres and Redis: a Hocuspocus
 * extension that relays each loaded document's changes over Redis pub/sub
 * (one channel per document, subscribed while the document is loaded here).
 *
 * Why not `@hocuspocus/extension-redis` (4.7): it announces a change the
 * moment the Y transaction happens, so a peer would be sent a REST change
 * whose commit may still fail; its document load waits on Redis, so an
 * instance that lost Redis could not open a document for its own clients; and
 * it takes a Redis lock on every store hook, which Trellis (log first, no
 * store hook) does not need. What it shares with it: the message shapes are
 * Yjs's own (updates, state vectors, awareness updates), and updates from
 * peers are applied with origin `{ source: 'redis' }`, which the engine
 * neither logs nor derives (the instance that accepted the change did both).
 *
 * - A sync client's update is relayed as it is applied: it is already in the
 *   log (the engine logs before applying).
 * - A server change (REST, MCP) is relayed only once committed: the relay
 *   then announces the document's state vector, and peers pull what they
 *   lack. Every answer to a peer waits the same way (`committed`).
 * - Loading a document another instance holds asks it for its state (up to
 *   a second), so a REST read on B sees what clients on A typed.
 * - Losing Redis: nothing blocks. Clients of this instance keep syncing; when
 *   Redis is back every loaded document re-subscribes and exchanges state
 *   vectors with its peers, which makes up for everything missed.
 */

export const REDIS_ORIGIN = { source: 'redis' } as const;

const enum Kind {
  /** A Y update a peer applied (a sync client's, already logged). */
  Update = 1,
  /** "Here is my state vector": peers answer with what it lacks (and their own vector). */
  Announce = 2,
  /** An answer on the asker's reply channel: an update, and maybe the answerer's vector. */
  Reply = 3,
  Awareness = 4,
}

const KIND_NAMES: Record<Kind, string> = { [Kind.Update]: 'update', [Kind.Announce]: 'announce', [Kind.Reply]: 'reply', [Kind.Awareness]: 'awareness' };

const INITIAL_SYNC_WAIT_MS = 1_000;

export type RedisRelayOptions = {
  redisUrl: string;
  /** Namespaces channels (REDIS_PREFIX). */
  prefix: string;
  /** Resolves once no server change of the document is uncommitted: what peers may be sent. */
  committed(documentName: string): Promise<void>;
  log: Logger;
  metrics?: Metrics;
};

export class RedisSyncRelay implements Extension {
  readonly extensionName = 'trellis-redis-relay';
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly documents = new Map<string, Document>();
  private readonly detach = new Map<string, () => void>();
  /** Per document: inbound messages are handled one after another (answers wait for commits). */
  private readonly inbound = new Map<string, Promise<void>>();
  /** Documents whose committed server changes are announced at the end of this turn. */
  private readonly announcing = new Set<string>();
  private readonly initialSyncs = new Map<string, () => void>();
  private wasReady = false;
  /** Redis was lost and not yet caught up with (one warning an outage, however often ioredis retries). */
  private lost = false;
  private closed = false;
  /** Reconnections are handled one at a time. */
  private reconnecting: Promise<void> = Promise.resolve();

  constructor(private readonly options: RedisRelayOptions) {
    ({ pub: this.pub, sub: this.sub } = openPubSub(options.redisUrl));
    this.sub.on('messageBuffer', (channel: Buffer, data: Buffer) => this.receive(channel.toString(), data));
    // Both connections: an announce sent while the publisher is still down would be dropped, and nothing would catch up.
    onBothReady({ pub: this.pub, sub: this.sub }, () => {
      this.reconnecting = this.reconnecting.then(() => this.resubscribe());
    });
    for (const client of [this.pub, this.sub]) {
      client.on('close', () => {
        if (!this.wasReady || this.lost || this.closed) return;
        this.lost = true;
        options.log.warn('sync relay lost Redis; serving local clients only until it is back');
      });
    }
  }

  /** Whether changes are being shared with other instances right now. */
  isConnected(): boolean {
    return bothReady({ pub: this.pub, sub: this.sub });
  }

  async afterLoadDocument({ documentName, document }: afterLoadDocumentPayload) {
    this.documents.set(documentName, document);
    this.detach.get(documentName)?.();
    this.detach.set(documentName, this.watch(documentName, document));
    if (!this.isConnected()) return; // caught up when Redis is back (resubscribe)
    try {
      await this.sub.subscribe(this.channel(documentName));
      const peers = await this.peerCount(documentName);
      const caughtUp = peers > 0 ? this.awaitInitialSync(documentName) : null;
      await this.announce(documentName);
      await caughtUp;
    } catch (error) {
      this.options.log.warn({ err: error, documentName }, 'sync relay could not announce a document; it catches up when Redis answers');
    }
  }

  async afterUnloadDocument({ documentName, instance }: afterUnloadDocumentPayload) {
    if (instance.documents.has(documentName)) return; // loaded again meanwhile
    this.documents.delete(documentName);
    this.detach.get(documentName)?.();
    this.detach.delete(documentName);
    this.inbound.delete(documentName);
    this.initialSyncs.get(documentName)?.();
    if (this.isConnected()) await this.sub.unsubscribe(this.channel(documentName)).catch(() => {});
  }

  async close() {
    this.closed = true;
    for (const stop of this.detach.values()) stop();
    this.detach.clear();
    this.documents.clear();
    await closePubSub({ pub: this.pub, sub: this.sub });
  }

  /** Relays what happens to a loaded document: clients' updates at once, server changes once committed, awareness. */
  private watch(documentName: string, document: Document): () => void {
    const onUpdate = (update: Uint8Array, origin: unknown) => {
      if (isConnectionOrigin(origin)) this.publish(this.channel(documentName), Kind.Update, documentName, (e) => encoding.writeVarUint8Array(e, update));
      else if (isServerOrigin(origin)) this.announceCommitted(documentName);
    };
    const onAwareness = ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
      if (origin === REDIS_ORIGIN || document.getConnectionsCount() === 0) return;
      const update = encodeAwarenessUpdate(document.awareness, [...added, ...updated, ...removed]);
      this.publish(this.channel(documentName), Kind.Awareness, documentName, (e) => encoding.writeVarUint8Array(e, update));
    };
    document.on('update', onUpdate);
    document.awareness.on('update', onAwareness);
    return () => {
      document.off('update', onUpdate);
      document.awareness.off('update', onAwareness);
    };
  }

  private announceCommitted(documentName: string) {
    if (this.announcing.has(documentName)) return;
    this.announcing.add(documentName);
    void this.options
      .committed(documentName)
      .then(() => {
        this.announcing.delete(documentName);
        return this.announce(documentName);
      })
      .catch(() => this.announcing.delete(documentName));
  }

  private async announce(documentName: string) {
    const document = this.documents.get(documentName);
    if (!document) return;
    await this.options.committed(documentName);
    const vector = Y.encodeStateVector(document);
    await this.publishNow(this.channel(documentName), Kind.Announce, documentName, (e) => encoding.writeVarUint8Array(e, vector));
  }

  private receive(channel: string, data: Buffer) {
    let message: { from: string; kind: Kind; documentName: string; decoder: decoding.Decoder };
    try {
      const decoder = decoding.createDecoder(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      const from = decoding.readVarString(decoder);
      if (from === INSTANCE_ID) return;
      const kind = decoding.readVarUint(decoder) as Kind;
      message = { from, kind, documentName: decoding.readVarString(decoder), decoder };
    } catch {
      return;
    }
    if (!this.documents.has(message.documentName)) return;
    this.options.metrics?.relayMessages.inc({ direction: 'in', kind: KIND_NAMES[message.kind] ?? 'unknown' });
    const previous = this.inbound.get(message.documentName) ?? Promise.resolve();
    const next = previous
      .then(() => this.handle(channel, message))
      .catch((error) => this.options.log.warn({ err: error, documentName: message.documentName }, 'sync relay could not apply a message from a peer'));
    this.inbound.set(message.documentName, next);
  }

  private async handle(channel: string, { from, kind, documentName, decoder }: { from: string; kind: Kind; documentName: string; decoder: decoding.Decoder }) {
    const document = this.documents.get(documentName);
    if (!document) return;
    switch (kind) {
      case Kind.Update:
        Y.applyUpdate(document, decoding.readVarUint8Array(decoder), REDIS_ORIGIN);
        return;
      case Kind.Awareness:
        applyAwarenessUpdate(document.awareness, decoding.readVarUint8Array(decoder), REDIS_ORIGIN);
        return;
      case Kind.Announce: {
        const theirs = decoding.readVarUint8Array(decoder);
        await this.answer(from, documentName, theirs, true);
        return;
      }
      case Kind.Reply: {
        Y.applyUpdate(document, decoding.readVarUint8Array(decoder), REDIS_ORIGIN);
        const theirs = decoding.hasContent(decoder) ? decoding.readVarUint8Array(decoder) : null;
        if (theirs) await this.answer(from, documentName, theirs, false);
        if (channel === this.replyChannel(INSTANCE_ID)) this.initialSyncs.get(documentName)?.();
        return;
      }
    }
  }

  /** Sends a peer what its state vector lacks (committed changes only), and, when asked, our own vector so it sends what we lack. */
  private async answer(to: string, documentName: string, theirVector: Uint8Array, withOurVector: boolean) {
    await this.options.committed(documentName);
    const document = this.documents.get(documentName);
    if (!document) return;
    const missing = Y.encodeStateAsUpdate(document, theirVector);
    const ours = withOurVector ? Y.encodeStateVector(document) : null;
    await this.publishNow(this.replyChannel(to), Kind.Reply, documentName, (e) => {
      encoding.writeVarUint8Array(e, missing);
      if (ours) encoding.writeVarUint8Array(e, ours);
    });
  }

  private awaitInitialSync(documentName: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, INITIAL_SYNC_WAIT_MS);
      const initialSyncs = this.initialSyncs;
      function done() {
        clearTimeout(timer);
        initialSyncs.delete(documentName);
        resolve();
      }
      initialSyncs.set(documentName, done);
    });
  }

  private async peerCount(documentName: string): Promise<number> {
    const [, count] = (await this.pub.pubsub('NUMSUB', this.channel(documentName))) as [string, number | string];
    return Math.max(0, Number(count) - 1);
  }

  /** After (re)connecting: listen again, and swap state vectors with peers for every loaded document (what was missed meanwhile). */
  private async resubscribe() {
    if (this.closed) return;
    const returning = this.wasReady;
    this.wasReady = true;
    try {
      await this.sub.subscribe(this.replyChannel(INSTANCE_ID), ...[...this.documents.keys()].map((name) => this.channel(name)));
      for (const documentName of this.documents.keys()) await this.announce(documentName);
      this.lost = false;
      if (returning) this.options.log.info({ documents: this.documents.size }, 'sync relay reconnected to Redis; caught up with peers');
    } catch (error) {
      this.options.log.warn({ err: error }, 'sync relay could not resubscribe; trying again on the next connection');
    }
  }

  private publish(channel: string, kind: Kind, documentName: string, body: (encoder: encoding.Encoder) => void) {
    void this.publishNow(channel, kind, documentName, body).catch(() => {
      // Redis is away: this peer catches up by state vectors when it is back.
    });
  }

  private async publishNow(channel: string, kind: Kind, documentName: string, body: (encoder: encoding.Encoder) => void) {
    if (!this.isConnected()) return;
    const encoder = encoding.createEncoder();
    encoding.writeVarString(encoder, INSTANCE_ID);
    encoding.writeVarUint(encoder, kind);
    encoding.writeVarString(encoder, documentName);
    body(encoder);
    await this.pub.publish(channel, Buffer.from(encoding.toUint8Array(encoder)));
    this.options.metrics?.relayMessages.inc({ direction: 'out', kind: KIND_NAMES[kind] });
  }

  private channel(documentName: string) {
    return `${this.options.prefix}sync:${documentName}`;
  }

  private replyChannel(instance: string) {
    return `${this.options.prefix}sync-reply#${instance}`;
  }
}
