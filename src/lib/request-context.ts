import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the HTTP request being served, wherever its work goes (domain,
 * sync engine), without threading it through every call: a failure deep in
 * a commit is logged once with the request that caused it.
 */
const storage = new AsyncLocalStorage<string>();

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore();
}
