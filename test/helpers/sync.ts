import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';

export type SyncClient = {
  provider: HocuspocusProvider;
  socket: HocuspocusProviderWebsocket;
  doc: Y.Doc;
  closed: Promise<{ code?: number; reason?: string }>;
  authenticationFailed: Promise<string>;
  destroy(): void;
};

/**
 * Node's WebSocket for a provider, sending a session cookie as a browser would (with the page's
 * `origin` when given).
 */
export function cookieWebSocket({ cookie, origin }: { cookie?: string; origin?: string }) {
  return class CookieWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      // `origin`: the page a browser would name in the handshake.
      super(url, protocols, { headers: { ...(cookie ? { cookie: `svc-session=${cookie}` } : {}) }, ...(origin ? { origin } : {}) });
      // The provider takes its own 'error' listener off before it closes a socket. A socket still in
      // its handshake (a provider reconnecting after the server closed it) then emits the close's
      // error with no listener, an uncaught exception that fails the run. The provider still sees
      // every error while it listens; this one only keeps the late one from escaping.
      this.on('error', () => {});
    }
  };
}

/**
 * A real @hocuspocus/provider in Node (which has no global WebSocket): the
 * token is an API key, or a session cookie is sent as a browser would
 * (with the page's `origin` when given).
 */
export function connectClient(
  baseUrl: string,
  name: string,
  credential: { token?: string; cookie?: string; origin?: string },
  /** Query parameters of the connection URL (the run a connection's writes join: `{ run }`). */
  parameters: Record<string, string> = {},
): SyncClient {
  const socket = new HocuspocusProviderWebsocket({
    url: baseUrl.replace(/^http/, 'ws') + '/api/sync' + (Object.keys(parameters).length > 0 ? `?${new URLSearchParams(parameters)}` : ''),
    WebSocketPolyfill: cookieWebSocket(credential),
    maxAttempts: 1,
  });
  const doc = new Y.Doc();
  let onClosed!: (value: { code?: number; reason?: string }) => void;
  let onFailed!: (reason: string) => void;
  const closed = new Promise<{ code?: number; reason?: string }>((resolve) => (onClosed = resolve));
  const authenticationFailed = new Promise<string>((resolve) => (onFailed = resolve));
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name,
    document: doc,
    token: credential.token ?? '',
    onAuthenticationFailed: ({ reason }) => onFailed(reason),
    onClose: ({ event }) => onClosed({ code: event?.code, reason: event?.reason }),
  });
  provider.attach();
  return {
    provider,
    socket,
    doc,
    closed,
    authenticationFailed,
    destroy: () => {
      provider.destroy();
      socket.destroy();
    },
  };
}

export function synced(client: SyncClient, timeoutMs = 5000): Promise<void> {
  if (client.provider.isSynced) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('provider did not sync')), timeoutMs);
    client.provider.on('synced', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Polls until `check` passes (returns truthy) or the time runs out. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5000, intervalMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError ?? new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until the server has acknowledged every local change of this client. */
export function acknowledged(client: SyncClient, timeoutMs = 5000): Promise<void> {
  return eventually(() => client.provider.unsyncedChanges === 0, timeoutMs).then(() => {});
}

/** The Y.XmlText of the n-th top-level paragraph of a doc body (test-only reach into the documented layout: the `default` fragment). */
export function paragraphText(doc: Y.Doc, index: number): Y.XmlText {
  const paragraph = doc.getXmlFragment('default').get(index) as Y.XmlElement;
  return paragraph.get(0) as Y.XmlText;
}
