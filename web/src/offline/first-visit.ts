/**
 * The API reads of a page the service worker does not control yet. On the
 * first visit the worker installs while the page is already drawing, so
 * `/api/me`, the workspace list and the open workspace are read straight
 * from the network and never reach the worker's cache: a reload offline
 * would then know nothing about the person. Those answers are kept here
 * and handed to the worker as soon as it controls the page; the worker
 * stores the ones it caches anyway (its own list decides) unless it
 * already holds a newer answer. No request is repeated.
 */

interface Read {
  path: string;
  body: string;
  contentType: string;
}

const MAX_READS = 50;
let pending: Read[] = [];
let handedOver = false;

/** True while this page's requests bypass the worker (no controller yet). */
export function pageIsUncontrolled(): boolean {
  return 'serviceWorker' in navigator && !navigator.serviceWorker.controller;
}

/** Called by the REST client for a successful GET made while the page was uncontrolled. */
export function rememberUncontrolledRead(path: string, response: Response, body: string) {
  const read = { path, body, contentType: response.headers.get('content-type') ?? 'application/json' };
  const controller = navigator.serviceWorker?.controller;
  // Answered after the hand-over (a slow read that started before it): send it on its own.
  if (handedOver && controller) return controller.postMessage({ type: 'first-visit-reads', reads: [read] });
  pending = [...pending.filter((r) => r.path !== path), read].slice(-MAX_READS);
}

/** Sends the remembered reads to the worker once it controls this page. */
export function handOverWhenControlled() {
  if (!('serviceWorker' in navigator)) return;
  const send = () => {
    const controller = navigator.serviceWorker.controller;
    if (!controller || handedOver) return;
    handedOver = true;
    if (pending.length) controller.postMessage({ type: 'first-visit-reads', reads: pending });
    pending = [];
  };
  navigator.serviceWorker.addEventListener('controllerchange', send);
  send();
}
