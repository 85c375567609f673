/**
 * Live documents for the app: one websocket to `/api/sync` (the session
 * cookie goes with the handshake, so the provider's token is empty) shared
 * by every open document, each document also kept in IndexedDB so it opens
 * and edits offline, and one status everyone can show: saved, saving or
 * offline.
 *
 * "Saved" comes from the digest protocol (docs/SYNC-DOCUMENTS.md, Digests),
 * not from the provider's unsynced-changes count: after a reconnect that
 * count restarts at one and the first acknowledgement brings it to zero,
 * while the offline edits can still be on the way. A digest answer is sent
 * after every message this client sent before the question is stored, and
 * says whether the server holds all of it.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import { IndexeddbPersistence } from 'y-indexeddb';
import * as Y from 'yjs';
import { ConvergenceCheck } from '../../../src/model/sync-digest';
import { colorFor } from '../lib/format';
import { createStore, type Store } from '../lib/store';

/**
 * `saved`: connected, and the server confirmed it holds every change made
 * here to each open document (offline ones included). `saving`: connected,
 * and some document is not confirmed yet. `offline`: no connection.
 */
export type SyncStatus = 'saved' | 'saving' | 'offline';

export interface PresenceUser {
  id: string;
  name: string;
  color: string;
  kind: 'user' | 'agent';
}

export interface OpenDocument {
  name: string;
  doc: Y.Doc;
  provider: HocuspocusProvider;
  /** Resolves once the local IndexedDB copy is loaded (immediately useful offline). */
  localReady: Promise<void>;
  /** True once the server's state has been merged in at least once this session. */
  synced: Store<boolean>;
  release(): void;
}

const LOCAL_DB_PREFIX = 'trellis';

export const syncStatus = createStore<SyncStatus>(navigator.onLine ? 'saving' : 'offline');
/** True while some document has edits made here that the server has not confirmed (kept across reloads). */
export const unsavedEdits = createStore<boolean>(false);

let socket: HocuspocusProviderWebsocket | null = null;
const open = new Map<string, { entry: OpenDocument; users: number; persistence: IndexeddbPersistence; check: ConvergenceCheck }>();
let identity: PresenceUser | null = null;
let userId = '';

function sharedSocket(): HocuspocusProviderWebsocket {
  if (socket) return socket;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/sync`;
  socket = new HocuspocusProviderWebsocket({
    url,
    // Reconnect quickly after a drop (the default backs off to 30 s); a dead link is noticed within 10 s.
    // (`delay` must not be below `minDelay`, or the retry loop throws before its first attempt.)
    delay: 1000,
    minDelay: 250,
    factor: 1.5,
    maxDelay: 4000,
    maxAttempts: 0,
    messageReconnectTimeout: 10_000,
  });
  socket.on('status', refreshStatus);
  socket.on('maxAttemptsFailed', ({ error }: { error?: unknown }) => console.warn('sync: stopped reconnecting', error));
  socket.on('close', refreshStatus);
  socket.on('status', ({ status }: { status: string }) => {
    if (status === 'connected') flushDirtyDocuments();
  });
  window.addEventListener('online', () => {
    // The browser knows before the retry timer does.
    if (socket && socket.status !== 'connected') void socket.connect();
    refreshStatus();
  });
  window.addEventListener('offline', refreshStatus);
  return socket;
}

/** Who this tab is, for presence and cursors; also scopes local storage per account. */
export function setIdentity(user: { id: string; name: string; principalType: 'user' | 'agent' }) {
  identity = { id: user.id, name: user.name, color: colorFor(user.id), kind: user.principalType };
  userId = user.id;
  unsavedEdits.set(dirtyNames().length > 0);
  for (const { entry } of open.values()) entry.provider.awareness?.setLocalStateField('user', identity);
  flushDirtyDocuments();
}

export function openDocument(name: string): OpenDocument {
  const existing = open.get(name);
  if (existing) {
    existing.users++;
    return existing.entry;
  }
  const doc = new Y.Doc();
  const persistence = new IndexeddbPersistence(localDatabaseName(userId, name), doc);
  const synced = createStore(false);
  const provider = new HocuspocusProvider({ websocketProvider: sharedSocket(), name, document: doc, token: '' });
  provider.attach();
  const check = new ConvergenceCheck(provider, { isConnected: () => socket?.status === 'connected' });
  // Clean once the local copy is loaded (its edits are then in what the server was asked about) and the server's digest covers everything.
  let localLoaded = false;
  const checkClean = () => {
    if (localLoaded && check.state === 'saved') markClean(name);
    refreshStatus();
  };
  void persistence.whenSynced.then(() => {
    localLoaded = true;
    checkClean();
  });
  check.onState(checkClean);
  provider.on('synced', () => {
    synced.set(true);
    refreshStatus();
  });
  doc.on('update', (_update: Uint8Array, origin: unknown) => {
    // Our own edit (not the server's, not the local copy loading): remember it until the server has it.
    if (origin !== provider && origin !== persistence) markDirty(name);
  });
  provider.on('status', refreshStatus);
  if (identity) provider.awareness?.setLocalStateField('user', identity);
  const entry: OpenDocument = {
    name,
    doc,
    provider,
    localReady: persistence.whenSynced.then(() => undefined),
    synced,
    release: () => {
      const slot = open.get(name);
      if (!slot || --slot.users > 0) return;
      if (isDirty(name)) {
        // Edits the server has not acknowledged yet: stay connected in the background until it has.
        slot.users = 0;
        lingerUntilClean(name);
        return;
      }
      void closeDocument(name);
    },
  };
  open.set(name, { entry, users: 1, persistence, check });
  refreshStatus();
  return entry;
}

// ---------------------------------------------------------------------------
// Edits not yet acknowledged by the server, per document, kept across reloads:
// a document edited offline and then closed (or a reload) is opened in the
// background when the connection is back, so its edits still reach the server.

function dirtyKey() {
  return `${LOCAL_DB_PREFIX}:${userId}:unsynced`;
}

function dirtyNames(): string[] {
  try {
    const names = JSON.parse(localStorage.getItem(dirtyKey()) ?? '[]');
    return Array.isArray(names) ? names.filter((name) => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

function isDirty(name: string) {
  return dirtyNames().includes(name);
}

function markDirty(name: string) {
  if (!userId || isDirty(name)) return;
  localStorage.setItem(dirtyKey(), JSON.stringify([...dirtyNames(), name]));
  unsavedEdits.set(true);
}

function markClean(name: string) {
  if (!userId || !isDirty(name)) return;
  const rest = dirtyNames().filter((other) => other !== name);
  localStorage.setItem(dirtyKey(), JSON.stringify(rest));
  unsavedEdits.set(rest.length > 0);
  lingering.get(name)?.();
}

/** Documents kept open in the background until clean, each with what to do once it is. */
const lingering = new Map<string, () => void>();

function lingerUntilClean(name: string) {
  if (lingering.has(name)) return;
  if (!open.has(name)) return;
  const check = () => {
    const current = open.get(name);
    if (!current || current.users > 0) return lingering.delete(name);
    if (!isDirty(name)) {
      lingering.delete(name);
      current.users = 1;
      current.entry.release();
    }
  };
  lingering.set(name, check);
  check();
}

/** Opens, in the background, every document with local edits the server has not acknowledged. */
function flushDirtyDocuments() {
  if (!userId) return;
  for (const name of dirtyNames()) {
    if (open.has(name)) continue;
    const document = openDocument(name);
    document.release();
  }
}

function refreshStatus() {
  const connected = socket?.status === 'connected' && navigator.onLine;
  if (!connected) return syncStatus.set('offline');
  // A closed document with edits the server has not confirmed counts too: it is reopened in the background until it has.
  const pending = [...open.values()].some(({ check }) => check.state !== 'saved') || dirtyNames().length > 0;
  syncStatus.set(pending ? 'saving' : 'saved');
}

function localDatabaseName(owner: string, documentName: string) {
  return `${LOCAL_DB_PREFIX}:${owner}:${documentName}`;
}

/** Deletes this account's local document copies (sign-out). */
export async function forgetLocalDocuments(owner: string): Promise<void> {
  for (const { entry } of [...open.values()]) entry.release();
  const databases = 'databases' in indexedDB ? await indexedDB.databases() : [];
  const prefix = `${LOCAL_DB_PREFIX}:${owner}:`;
  await Promise.all(databases.filter((db) => db.name?.startsWith(prefix)).map((db) => deleteLocalDatabase(db.name!)));
}

/**
 * Throws away this device's copy of a document with every edit in it the
 * server has not acknowledged. A change the server refused as too large
 * stays in that copy and would be sent again at every reconnect (undoing it
 * adds to it); after this the document opens as the server has it.
 */
export async function discardLocalDocument(name: string): Promise<void> {
  lingering.delete(name);
  await closeDocument(name);
  await deleteLocalDatabase(localDatabaseName(userId, name));
  markClean(name);
  refreshStatus();
}

/** Disconnects an open document and lets go of it and its local copy's handle (the copy itself stays). */
async function closeDocument(name: string): Promise<void> {
  const slot = open.get(name);
  if (!slot) return;
  open.delete(name);
  slot.check.destroy();
  slot.entry.provider.destroy();
  const persisted = slot.persistence.destroy();
  slot.entry.doc.destroy();
  refreshStatus();
  await persisted;
}

function deleteLocalDatabase(databaseName: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const request = indexedDB.deleteDatabase(databaseName);
    request.onsuccess = request.onerror = request.onblocked = () => resolve();
  });
}

/** Awareness states of the other people on a document, newest first, one per principal. */
export function peersOf(document: OpenDocument): Array<{ clientId: number; user: PresenceUser; state: Record<string, unknown> }> {
  const awareness = document.provider.awareness;
  if (!awareness) return [];
  const seen = new Set<string>();
  const peers: Array<{ clientId: number; user: PresenceUser; state: Record<string, unknown> }> = [];
  for (const [clientId, state] of awareness.getStates()) {
    if (clientId === awareness.clientID) continue;
    const user = state.user as PresenceUser | undefined;
    if (!user?.id) continue;
    peers.push({ clientId, user, state });
    seen.add(user.id);
  }
  return peers;
}
