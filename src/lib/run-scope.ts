/**
 * The run a request's writes join (docs/RUNS.md). It travels on the actor
 * (`Actor.request`), not in an AsyncLocalStorage: entering one turns on
 * promise hooks for the whole process, which every await then pays
 * (docs/PERFORMANCE.md, issue 38). The edge gives each request its own copy
 * of the actor with a scope holding the run the caller named (the
 * `Trellis-Run` header, an MCP `run` argument), access decides the run once
 * it knows the workspace and the write (`joined`), the domain puts it in the
 * origin of each change the caller makes, and the edge answers `Trellis-Run`
 * from it.
 */
export type RunScope = {
  /** The run the caller named, null when none. */
  requested: string | null;
  /** The run this request's writes join, once decided. */
  joined: { id: string; principalId: string } | null;
};

/** What an actor carries of the HTTP request (or MCP tool call) it acts in. */
export type RequestScope = {
  /** The request id, for log lines of work the request caused (absent for work no request started). */
  id?: string;
  run: RunScope;
};

/** The run a change by this principal joins in the scope, or null. */
export function joinedRun(scope: RequestScope | undefined, principalId: string): string | null {
  const joined = scope?.run.joined;
  return joined && joined.principalId === principalId ? joined.id : null;
}
