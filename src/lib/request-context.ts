import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the HTTP request being served, for the one reader that has no
 * caller to take it from: the embedded database's driver, which lets a
 * request's statements keep their turn (FairTurns in
 * src/persistence/pglite-dialect.ts). Entered only on the embedded
 * database: the first store entered turns on promise hooks for the whole
 * process (docs/PERFORMANCE.md, issue 38), so a Postgres server never
 * enters it. Everything else takes the request from the actor
 * (src/lib/run-scope.ts).
 *
 * The store is on only while an HTTP request is being served
 * (`enterRequest`): once the last one has closed it is disabled, which turns
 * the promise hooks off again. Under a typing sync client with no request in
 * flight they cost every promise of the serving thread an init hook and a
 * store copy: about 10 µs a keystroke on the embedded database
 * (docs/PERFORMANCE.md, session 19, h19-keys). Work a request leaves running
 * after its answer reads no request id once no request is open, and waits
 * its turn as background work does.
 */
const storage = new AsyncLocalStorage<string>();

/** HTTP requests entered and not yet closed (or turned into a stream). */
let open = 0;
/** Their responses. */
const counted = new WeakSet<object>();

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

type Response = { once(event: 'close', listener: () => void): unknown };

/**
 * Runs `fn` (the rest of the request's handling) in the request's store,
 * counted open until `response` closes (its answer sent, or its connection
 * gone); the last one to close turns the store, and so the promise hooks, off.
 */
export function enterRequest<T>(requestId: string, response: Response, fn: () => T): T {
  open++;
  counted.add(response);
  response.once('close', () => leaveRequest(response));
  return storage.run(requestId, fn);
}

/**
 * The request answering on `response` no longer counts as open: it closed,
 * or it became a long-lived stream (Server-Sent Events, src/http/sse.ts),
 * whose later statements wait their turn as background work does; else one
 * browser tab holding a stream would keep the promise hooks on for good.
 */
export function leaveRequest(response: object) {
  if (!counted.delete(response)) return;
  open--;
  if (open === 0) storage.disable();
}

/** HTTP requests entered and not closed (for tests). */
export function openRequests(): number {
  return open;
}

export function currentRequestId(): string | undefined {
  return storage.getStore();
}
