/* Trellis service worker. Built by web/vite.config.ts, which fills in the shell's file list. */
const SHELL_VERSION = '__SHELL_VERSION__';
const SHELL_FILES = __SHELL_FILES__;
const SHELL_CACHE = `trellis-shell-${SHELL_VERSION}`;
const ASSET_CACHE = 'trellis-assets';
const API_CACHE = 'trellis-api';

/** API reads the app needs to draw a workspace offline; answered from the network first, from here when it fails. */
const CACHED_API = [
  /^\/api\/me$/,
  /^\/api\/me\/org$/,
  /^\/api\/me\/orgs$/,
  /^\/api\/workspaces$/,
  /^\/api\/orgs\/[^/]+\/workspaces\/[^/]+$/,
  /^\/api\/orgs\/[^/]+\/workspaces\/[^/]+\/(members|surfaces)$/,
];

/** Never the app: the API, sync and protocol paths the server owns. */
const SERVER_PATHS = /^\/(api|openapi\.json|share|oauth|\.well-known)(\/|$)/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL_CACHE)
      .then((cache) => cache.addAll(SHELL_FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name.startsWith('trellis-shell-') && name !== SHELL_CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;

  if (request.mode === 'navigate' && !SERVER_PATHS.test(url.pathname)) {
    event.respondWith(networkFirst(request, SHELL_CACHE, '/'));
    return;
  }
  if (url.pathname.startsWith('/assets/')) {
    event.respondWith(cacheFirst(request));
    return;
  }
  if (CACHED_API.some((pattern) => pattern.test(url.pathname)) && !url.search) {
    event.respondWith(networkFirst(request, API_CACHE));
  }
});

/**
 * API reads of pages this worker does not control, above all the first
 * visit's, made before it was installed (web/src/offline/first-visit.ts):
 * kept like any answer that passed through here, unless the one held is
 * newer (by the server's `Date`).
 */
self.addEventListener('message', (event) => {
  const data = event.data;
  if (!data || data.type !== 'first-visit-reads' || !Array.isArray(data.reads)) return;
  event.waitUntil(
    (async () => {
      const cache = await caches.open(API_CACHE);
      for (const read of data.reads) {
        if (typeof read?.path !== 'string' || typeof read.body !== 'string') continue;
        const url = new URL(read.path, self.location.origin);
        if (url.origin !== self.location.origin || url.search || !CACHED_API.some((pattern) => pattern.test(url.pathname))) continue;
        const held = await cache.match(url.href, { ignoreVary: true });
        const date = Date.parse(read.date);
        if (held && !(date > Date.parse(held.headers.get('date')))) continue;
        const headers = { 'content-type': String(read.contentType || 'application/json') };
        if (read.date) headers.date = String(read.date);
        await cache.put(url.href, new Response(read.body, { status: 200, headers }));
      }
    })(),
  );
});

/*
 * Lookups ignore Vary: an API answer varies by Origin for other sites' CORS,
 * and the page's `crossorigin` script and style requests send an Origin the
 * precache's entries (stored by `addAll`, without one) never had, so a
 * Vary-respecting lookup misses exactly when the network is gone.
 */

/** The network's answer (kept for later), or the cached one when the network fails. */
async function networkFirst(request, cacheName, fallbackKey) {
  const cache = await caches.open(cacheName);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(fallbackKey ?? request, response.clone());
    // A signed-out answer must not leave yesterday's data behind.
    if (response.status === 401 && cacheName === API_CACHE) await caches.delete(API_CACHE);
    return response;
  } catch (error) {
    const cached = (await cache.match(fallbackKey ?? request, { ignoreVary: true })) ?? (fallbackKey ? await caches.match(fallbackKey, { ignoreVary: true }) : undefined);
    if (cached) return cached;
    throw error;
  }
}

async function cacheFirst(request) {
  const cached = await caches.match(request, { ignoreVary: true });
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) {
    const cache = await caches.open(ASSET_CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}
