import { setFlagsFromString } from 'node:v8';

/**
 * V8 optimises a JavaScript function once it has run a budget of bytecode
 * (`--interrupt-budget`). A start runs most of its code once: the modules'
 * bodies, the routes' registration, the schemas they build. At the default
 * budget V8 optimised hundreds of those functions on its compiler threads
 * while the server started, which on a server given one core is core taken
 * from the start itself: ~0.4 s of a 3.5 s start (docs/PERFORMANCE.md,
 * issue 38, session 23). So the budget is raised from the first module the
 * server evaluates until it listens, then set back to the default, and code
 * that runs hot from then on is optimised as before.
 *
 * Only on the V8 it was measured on (Node 20's 11.3), whose default is
 * known: there is no way to read a flag back, and a later V8 tiers up
 * differently. A budget given on the command line is left alone (NODE_OPTIONS
 * cannot carry it).
 */
const DEFAULT_BUDGET_V8_11_3 = 67_584;
const STARTING_BUDGET = 1_000_000;

let raised = false;

export function raiseTieringBudgetForStart(
  v8Version: string = process.versions.v8,
  commandLine: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = setFlagsFromString,
): boolean {
  if (raised || !v8Version.startsWith('11.3.') || commandLine.some((option) => /^--interrupt[-_]budget=/.test(option))) return false;
  setFlags(`--interrupt-budget=${STARTING_BUDGET}`);
  raised = true;
  return true;
}

/** The default budget again, once the server listens; nothing when it was never raised. */
export function restoreTieringBudget(setFlags: (flags: string) => void = setFlagsFromString): boolean {
  if (!raised) return false;
  setFlags(`--interrupt-budget=${DEFAULT_BUDGET_V8_11_3}`);
  raised = false;
  return true;
}
