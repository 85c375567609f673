/**
 * The large table the query benches measure (table-queries, windows,
 * formulas): rows written straight into the table document in chunks of
 * 1,000, as a bulk import would, then the server left to settle.
 */
import { performance } from 'node:perf_hooks';
import { insertRows } from '../src/model/table/document';
import type { Principal } from '../src/policy/actor';
import { serverOrigin } from '../src/sync/origins';
import type { TestApp } from '../test/helpers/app';
import { round } from './tables';

type RowInput = Parameters<typeof insertRows>[1][number];

/** Waits until the event loop was busy under 5 % of a second (at most a minute); returns how long it took. */
export async function quiet(): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 60_000) {
    const before = performance.eventLoopUtilization();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (performance.eventLoopUtilization(before).utilization < 0.05) break;
  }
  return performance.now() - start;
}

/**
 * Writes `rows` rows made by `rowAt` into the table document, 1,000 a
 * transaction, then waits for the server's background work (projections,
 * search, the version pass) to finish: what a query measured after it sees.
 */
export async function fillTable(t: TestApp, documentName: string, principal: Principal, rows: number, rowAt: (i: number) => RowInput) {
  const fillStart = performance.now();
  for (let from = 0; from < rows; from += 1_000) {
    const chunk = Array.from({ length: Math.min(1_000, rows - from) }, (_, j) => rowAt(from + j));
    await t.services.sync.transact(documentName, serverOrigin(principal, 'system'), (doc) => insertRows(doc, chunk, null));
  }
  await t.services.sync.drain();
  const fillSeconds = round((performance.now() - fillStart) / 1000, 1);
  return { fillSeconds, settleSeconds: round((await quiet()) / 1000, 1) };
}
