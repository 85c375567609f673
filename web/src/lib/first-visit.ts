/**
 * The API reads of a page the service worker does not control. On the
 * first visit the worker installs while the page is already drawing, so
 * `/api/me`, the workspace list and the open workspace are read straight
 * from the network and never reach the worker's cache: a reload offline
 * would then know nothing about the person. (A page can also stay
 * uncontrolled for good: a worker that activates while the page is being
 * navigated to does not always claim it, and a forced reload bypasses the
 * worker.) Those answers are kept here and handed to the active worker as
 * soon as there is one; the worker stores the ones it caches anyway (its
 * own list decides) unless it already holds a newer answer for that path.
 * No request is repeated.
 */

interface Read {
  path: string;
  body: string;
  contentType: string;
  /** The server's `Date`: the worker keeps the newer of this and what it holds. */
  date: string | null;
}

const MAX_READS = 50;
let pending: Read[] = [];
let workerReady = false;

/** True while this page's requests bypass the worker (no controller). */
export function pageIsUncontrolled(): boolean {
  return 'serviceWorker' in navigator && !navigator.serviceWorker.controller;
}

/** Called by the REST client for a successful GET made while the page was uncontrolled. */
export function rememberUncontrolledRead(path: string, response: Response, body: string) {
  const read = { path, body, contentType: response.headers.get('content-type') ?? 'application/json', date: response.headers.get('date') };
  if (workerReady) return send([read]);
  pending = [...pending.filter((r) => r.path !== path), read].slice(-MAX_READS);
}

/** Hands the remembered reads to the worker once one is active, and every later one as it comes. */
export function handOverWhenReady() {
  if (!('serviceWorker' in navigator)) return;
  void navigator.serviceWorker.ready.then(() => {
    workerReady = true;
    if (pending.length) send(pending);
    pending = [];
  });
}

function send(reads: Read[]) {
  // The active worker of the moment (a newer version may have replaced the one first seen).
  void navigator.serviceWorker.ready.then((registration) => registration.active?.postMessage({ type: 'first-visit-reads', reads }));
}
