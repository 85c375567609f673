import { api, ApiError } from './lib/api';
import { createStore } from './lib/store';
import type { Me } from '../../src/model/schemas/account';
import { SIGNED_IN_COOKIE } from '../../src/model/session-hint';

export type { Principal } from '../../src/model/schemas/common';

export type { Me };

export type SessionState = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; me: Me } | { status: 'error'; error: ApiError };

export const session = createStore<SessionState>({ status: 'loading' });

/**
 * Reads `/api/me` (answered from the offline cache by the service worker
 * when the network is gone), unless the server's signed-in hint says this
 * browser holds no session: then the answer would be a 401, which the
 * browser logs as an error, so the app does not ask.
 */
export async function loadSession(): Promise<void> {
  if (!hasSessionHint()) return session.set({ status: 'signed-out' });
  try {
    const me = await api<Me>('GET', '/api/me');
    session.set({ status: 'signed-in', me });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      forgetSessionHint();
      session.set({ status: 'signed-out' });
    } else session.set({ status: 'error', error: error instanceof ApiError ? error : new ApiError(0, 'network', String(error)) });
  }
}

/** The server sets the hint on every page load while the session lives (src/model/session-hint.ts). */
export function hasSessionHint(): boolean {
  return document.cookie.split(/;\s*/).includes(`${SIGNED_IN_COOKIE}=1`);
}

function forgetSessionHint() {
  document.cookie = `${SIGNED_IN_COOKIE}=; Max-Age=0; Path=/; SameSite=Lax`;
}

export function currentUser(): Me {
  const state = session.get();
  if (state.status !== 'signed-in') throw new Error('not signed in');
  return state.me;
}

/**
 * Signs this browser out: the server ends every browser session of the
 * user, and what this device kept for offline use (cached API answers,
 * local copies of documents) is deleted.
 */
export async function signOut(): Promise<void> {
  const me = session.get().status === 'signed-in' ? (session.get() as { me: Me }).me : null;
  await api('DELETE', '/api/me/sessions').catch(() => undefined);
  forgetSessionHint();
  await clearOfflineData(me?.principal.id ?? null);
  session.set({ status: 'signed-out' });
}

async function clearOfflineData(userId: string | null) {
  if ('caches' in window) {
    for (const name of await caches.keys()) if (name.startsWith('trellis-api') || name.startsWith('trellis-blobs')) await caches.delete(name);
  }
  // The sync module is the signed-in app's (loaded by now): imported when needed, so the sign-in page does not carry it.
  if (userId) await (await import('./sync/connection')).forgetLocalDocuments(userId);
}
