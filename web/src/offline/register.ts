import { handOverWhenReady } from '../lib/first-visit';

/**
 * The service worker caches the app shell (so a reload offline still shows
 * the app) and the last answers of the few API reads the app needs to draw
 * itself; documents themselves come from IndexedDB (y-indexeddb).
 */
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || import.meta.env.DEV) return;
  handOverWhenReady();
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((error) => console.warn('service worker not registered', error));
  });
}
