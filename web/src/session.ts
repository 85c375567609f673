import { api, ApiError } from './lib/api';
import { createStore } from './lib/store';
import { forgetLocalDocuments } from './sync/connection';
import type { Me } from '../../src/model/schemas/account';

export type { Principal } from '../../src/model/schemas/common';

export type { Me };

export type SessionState = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; me: Me } | { status: 'error'; error: ApiError };

export const session = createStore<SessionState>({ status: 'loading' });

/** Reads `/api/me` (answered from the offline cache by the service worker when the network is gone). */
export async function loadSession(): Promise<void> {
  try {
    const me = await api<Me>('GET', '/api/me');
    session.set({ status: 'signed-in', me });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) session.set({ status: 'signed-out' });
    else session.set({ status: 'error', error: error instanceof ApiError ? error : new ApiError(0, 'network', String(error)) });
  }
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
  await clearOfflineData(me?.principal.id ?? null);
  session.set({ status: 'signed-out' });
}

async function clearOfflineData(userId: string | null) {
  if ('caches' in window) {
    for (const name of await caches.keys()) if (name.startsWith('trellis-api') || name.startsWith('trellis-blobs')) await caches.delete(name);
  }
  if (userId) await forgetLocalDocuments(userId);
}
