import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export type QuietMoment = {
  /** How long each look at the event loop lasts. */
  windowMs: number;
  /** The share of a window the event loop may have spent running callbacks for it to count as quiet. */
  busyShare: number;
  /** Past this long of waiting, the moment is taken anyway: work put off must not be put off for ever. */
  maxWaitMs: number;
};

/**
 * Work that holds the event loop in one turn and cannot be split (an
 * embedded database's ANALYZE of a 100,000-row table, one synchronous WASM
 * call of 0.2-2 s) is a stall for whoever is served meanwhile. It waits for
 * a quiet moment: a window in which the event loop was busy at most
 * `busyShare` of the time (Node's event-loop utilization), looked at one
 * window after another, for at most `maxWaitMs`. Resolves true when the
 * moment came (or the wait ran out), false when `signal` aborted it.
 */
export async function quietMoment(options: QuietMoment, signal?: AbortSignal): Promise<boolean> {
  const deadline = performance.now() + options.maxWaitMs;
  for (;;) {
    if (signal?.aborted) return false;
    const from = performance.eventLoopUtilization();
    // Unreferenced: a job waiting for quiet keeps no process alive.
    const slept = await sleep(options.windowMs, true, { signal, ref: false }).catch(() => false);
    if (!slept) return false;
    const busy = performance.eventLoopUtilization(from).utilization;
    if (busy <= options.busyShare || performance.now() >= deadline) return true;
  }
}
