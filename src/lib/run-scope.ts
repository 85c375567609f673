import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The run a request's writes join (docs/RUNS.md), wherever its work goes,
 * without threading it through every domain function: the edge opens a
 * scope with the run the caller named (the `Trellis-Run` header, an MCP
 * `run` argument), access decides the run once it knows the workspace and
 * the write (`joined`), the sync layer puts it in the origin of each change
 * the caller makes, and the edge answers `Trellis-Run` from it.
 */
export type RunScope = {
  /** The run the caller named, null when none. */
  requested: string | null;
  /** The run this request's writes join, once decided. */
  joined: { id: string; principalId: string } | null;
};

const storage = new AsyncLocalStorage<RunScope>();

export function withRunScope<T>(scope: RunScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentRunScope(): RunScope | undefined {
  return storage.getStore();
}

/** The run a change by this principal joins in the current request, or null. */
export function joinedRun(principalId: string): string | null {
  const joined = storage.getStore()?.joined;
  return joined && joined.principalId === principalId ? joined.id : null;
}
