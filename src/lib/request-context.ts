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
 */
const storage = new AsyncLocalStorage<string>();

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore();
}
