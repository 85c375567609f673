/**
 * Checked convergence (docs/SYNC-DOCUMENTS.md, "Digests"): a client and the
 * server compare what they hold instead of trusting that they agree.
 *
 * The client asks with a Hocuspocus stateless message carrying its digest;
 * the server answers on the same connection after every message the client
 * sent before the question, so whatever the answer says it holds of this
 * client's changes is already in the durable log. Clients that ignore the
 * message keep working: it is an opaque string to the Hocuspocus protocol.
 *
 * Browser-safe: the server (src/sync/digest.ts) and the web app share it.
 */
import { fromBase64, toBase64 } from 'lib0/buffer';
import { digest as sha256 } from 'lib0/hash/sha256';
import * as Y from 'yjs';

export const DIGEST_MESSAGE = 'trellis:digest';

export type DocumentDigest = {
  /** Base64 of `Y.encodeStateVector`. */
  stateVector: string;
  /**
   * Hex SHA-256 of the encoded snapshot (delete set and state vector).
   * Unlike the encoded state, which depends on how each peer happened to
   * merge its items, the snapshot is the same on every peer holding the same
   * state, so equal states give equal hashes.
   */
  hash: string;
};

export type DigestRequest = DocumentDigest & {
  type: typeof DIGEST_MESSAGE;
  id: number;
  /** The client found, at its previous check, that it lacked part of the server's state. */
  diverged?: 'client';
};

export type DigestReply = DocumentDigest & {
  type: typeof DIGEST_MESSAGE;
  id: number;
  /** The server lacks part of the state the client held when it asked: an update was lost on the way. */
  serverMissing: boolean;
};

export function documentDigest(doc: Y.Doc): DocumentDigest {
  return {
    stateVector: toBase64(Y.encodeStateVector(doc)),
    hash: hexOf(sha256(Y.encodeSnapshot(Y.snapshot(doc)))),
  };
}

function hexOf(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** True when `holder` has every change `other` has (a state vector at least as far on every client). */
export function stateCovers(holder: string | Uint8Array, other: string | Uint8Array): boolean {
  const mine = Y.decodeStateVector(typeof holder === 'string' ? fromBase64(holder) : holder);
  const theirs = Y.decodeStateVector(typeof other === 'string' ? fromBase64(other) : other);
  for (const [client, clock] of theirs) if ((mine.get(client) ?? 0) < clock) return false;
  return true;
}

/** The message, or null for any other stateless payload or a malformed one. */
export function parseDigestMessage(payload: string): (DocumentDigest & { id: number; serverMissing?: boolean; diverged?: 'client' }) | null {
  if (!payload.startsWith('{') || !payload.includes(DIGEST_MESSAGE)) return null;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const message = value as Record<string, unknown>;
  if (message.type !== DIGEST_MESSAGE) return null;
  if (!Number.isSafeInteger(message.id) || typeof message.stateVector !== 'string' || typeof message.hash !== 'string') return null;
  if (message.stateVector.length > MAX_STATE_VECTOR_CHARS || !/^[0-9a-f]{64}$/.test(message.hash)) return null;
  try {
    Y.decodeStateVector(fromBase64(message.stateVector));
  } catch {
    return null;
  }
  return {
    id: message.id as number,
    stateVector: message.stateVector,
    hash: message.hash,
    ...(typeof message.serverMissing === 'boolean' ? { serverMissing: message.serverMissing } : {}),
    ...(message.diverged === 'client' ? { diverged: 'client' as const } : {}),
  };
}

/** A state vector names each client once; a million clients is far past any real document. */
const MAX_STATE_VECTOR_CHARS = 16 * 1024 * 1024;

/** What the server decides from a request and its own state. */
export function judgeDigest(server: DocumentDigest, request: DocumentDigest): { serverMissing: boolean; diverged: boolean } {
  const serverMissing = !stateCovers(server.stateVector, request.stateVector);
  // Equal vectors (their encoding is canonical: clients sorted) with different snapshots: the same changes, deleted differently.
  return { serverMissing, diverged: serverMissing || (server.stateVector === request.stateVector && server.hash !== request.hash) };
}

export type SaveState = 'saved' | 'saving';

/** What ConvergenceCheck needs of a HocuspocusProvider (the real one satisfies it). */
export interface DigestProvider {
  document: Y.Doc;
  sendStateless(payload: string): void;
  forceSync(): void;
  on(event: 'stateless' | 'synced', cb: (payload: any) => void): unknown;
  off(event: 'stateless' | 'synced', cb: (payload: any) => void): unknown;
}

type Asked = { id: number; digest: DocumentDigest; changesAtAsk: number; resolve: Array<(state: SaveState) => void> };

/**
 * One document's convergence check on a client. Every local change makes
 * the state `saving` and asks again once changes pause; the state becomes
 * `saved` only when the server's answer covers everything this client held
 * when it asked and nothing changed locally since. A mismatch either way
 * runs a full state exchange (`forceSync`) and asks again.
 */
export class ConvergenceCheck {
  private current: SaveState = 'saving';
  private readonly listeners = new Set<(state: SaveState) => void>();
  private localChanges = 0;
  private nextId = 1;
  private asked: Asked | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private divergedAtLastCheck = false;
  private destroyed = false;
  private readonly quietMs: number;
  private readonly replyTimeoutMs: number;
  private readonly isConnected: () => boolean;

  constructor(
    private readonly provider: DigestProvider,
    options: { quietMs?: number; replyTimeoutMs?: number; isConnected?: () => boolean } = {},
  ) {
    this.quietMs = options.quietMs ?? 250;
    this.replyTimeoutMs = options.replyTimeoutMs ?? 5_000;
    this.isConnected = options.isConnected ?? (() => true);
    provider.document.on('update', this.onUpdate);
    provider.on('stateless', this.onStateless);
    provider.on('synced', this.onSynced);
  }

  get state(): SaveState {
    return this.current;
  }

  onState(cb: (state: SaveState) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Asks now; resolves with the state once the server answers (an unanswered question is asked again after a reconnect). */
  check(): Promise<SaveState> {
    return new Promise((resolve) => {
      if (this.destroyed) return resolve(this.current);
      this.clearTimer();
      const digest = documentDigest(this.provider.document);
      const waiting = this.asked?.resolve ?? [];
      this.asked = { id: this.nextId++, digest, changesAtAsk: this.localChanges, resolve: [...waiting, resolve] };
      const request: DigestRequest = { type: DIGEST_MESSAGE, id: this.asked.id, ...digest, ...(this.divergedAtLastCheck ? { diverged: 'client' as const } : {}) };
      this.divergedAtLastCheck = false;
      this.provider.sendStateless(JSON.stringify(request));
      // A question or its answer lost on the way is asked again.
      this.schedule(this.replyTimeoutMs);
    });
  }

  destroy() {
    this.destroyed = true;
    this.clearTimer();
    this.provider.document.off('update', this.onUpdate);
    this.provider.off('stateless', this.onStateless);
    this.provider.off('synced', this.onSynced);
    this.listeners.clear();
  }

  private readonly onUpdate = (_update: Uint8Array, origin: unknown) => {
    if (origin === this.provider) return;
    this.localChanges++;
    this.set('saving');
    this.schedule();
  };

  /**
   * After a (re)sync the client's own sync step 2 (its offline changes)
   * follows the server's by a moment: asking at once could overtake it and
   * report a loss that is not one.
   */
  private readonly onSynced = () => this.schedule();

  private readonly onStateless = ({ payload }: { payload: string }) => {
    const reply = parseDigestMessage(payload);
    const asked = this.asked;
    if (!reply || !asked || reply.id !== asked.id || reply.serverMissing === undefined) return;
    this.asked = null;
    this.clearTimer();
    const mine = documentDigest(this.provider.document);
    const clientMissing = !stateCovers(mine.stateVector, reply.stateVector);
    const hashDiffers = reply.stateVector === asked.digest.stateVector && reply.hash !== asked.digest.hash;
    if (reply.serverMissing || clientMissing || hashDiffers) {
      this.divergedAtLastCheck = clientMissing || hashDiffers;
      this.set('saving');
      this.provider.forceSync();
      for (const resolve of asked.resolve) resolve('saving');
      this.schedule();
      return;
    }
    const unchanged = this.localChanges === asked.changesAtAsk;
    if (unchanged) this.set('saved');
    else this.schedule();
    for (const resolve of asked.resolve) resolve(this.current);
  };

  private schedule(delay = this.quietMs) {
    if (this.destroyed) return;
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      // Offline: the question waits for the next `synced` (a reconnect).
      if (this.isConnected()) void this.check();
    }, delay);
  }

  private clearTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private set(state: SaveState) {
    if (this.current === state) return;
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }
}
