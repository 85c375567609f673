import { sql } from 'kysely';
import type { Db, Executor } from './database';
import type { PrincipalKind } from './schema';
import { readsOfTheLog } from './versions';
import { readLogPage } from './document-log';
import { ClockRanges, parsePrincipalKey, principalKey } from '../model/attribution';

/**
 * Who made each item of a document, from the update log (docs/ATTRIBUTION.md).
 * The log's rows name their principals; compaction deletes the rows it
 * folds, so it first folds their clock ranges into `document_attribution`
 * (`foldAttribution`, called by `writeSnapshot` in the transaction of the
 * delete). A read is that table plus the log still unfolded, read together.
 */

// Logged updates decoded per query while folding or reading (at most one run more): bounds the memory of one page of updates, and the
// serving thread's work between two statements (2,000 rows decoded in one go held the event loop 25-45 ms).
const PAGE_ROWS = 500;
// Six parameters a row; Postgres allows 65,535 parameters per statement.
const INSERT_ROWS = 10_000;

/** Claims every logged update of `document` in `(afterSeq, uptoSeq]` (to the head when null), in log order, a page at a time; the last seq claimed (0 for none). */
async function claimLog(db: Executor, document: string, ranges: ClockRanges, afterSeq: number, uptoSeq: number | null): Promise<number> {
  let after = afterSeq;
  let last = 0;
  for (;;) {
    const page = await readLogPage(db, document, after, PAGE_ROWS, uptoSeq ?? undefined);
    readsOfTheLog.attribution++;
    for (const { row, seq, update } of page) {
      ranges.claimUpdate(update, principalKey(row.principalType, row.principalId));
      last = after = seq;
    }
    if (page.length < PAGE_ROWS) return last;
  }
}

async function claimFolded(db: Executor, document: string, ranges: ClockRanges, clients?: readonly number[]): Promise<void> {
  if (clients?.length === 0) return;
  let query = db
    .selectFrom('documentAttribution')
    .select(['client', 'clockFrom', 'clockTo', 'principalType', 'principalId'])
    .where('document', '=', document);
  if (clients) query = query.where('client', '=', sql<number>`any(${`{${clients.join(',')}}`}::bigint[])`);
  const rows = await query.orderBy('client').orderBy('clockFrom').execute();
  for (const row of rows) ranges.claim(Number(row.client), Number(row.clockFrom), Number(row.clockTo), principalKey(row.principalType, row.principalId));
}

/**
 * The clock ranges of the logged updates of `document` in `(afterSeq, uptoSeq]`,
 * what a fold up to `uptoSeq` will write. Logged rows never change, so this
 * may be read before the fold's transaction (compaction does, to keep
 * appends waiting only for the write).
 */
export async function rangesOfLog(db: Executor, document: string, afterSeq: number, uptoSeq: number): Promise<ClockRanges> {
  const ranges = new ClockRanges();
  await claimLog(db, document, ranges, afterSeq, uptoSeq);
  return ranges;
}

/**
 * Folds the attribution of logged updates into the table; call in the
 * transaction that deletes them, with their ranges (`rangesOfLog`). The
 * ranges of the clients they touch are merged with what the table already
 * holds for those clients (which came first, so keeps what it has) and
 * rewritten.
 */
export async function foldAttribution(db: Executor, document: string, fresh: ClockRanges): Promise<void> {
  const clients = fresh.clientIds();
  if (clients.length === 0) return;
  const merged = new ClockRanges();
  await claimFolded(db, document, merged, clients);
  for (const range of fresh.ranges()) merged.claim(range.client, range.from, range.to, range.key);
  await db
    .deleteFrom('documentAttribution')
    .where('document', '=', document)
    .where('client', '=', sql<number>`any(${`{${clients.join(',')}}`}::bigint[])`)
    .execute();
  const rows = merged.ranges(clients).map((range) => {
    const principal = range.key === null ? null : parsePrincipalKey(range.key);
    return {
      document,
      client: range.client,
      clockFrom: range.from,
      clockTo: range.to,
      principalType: (principal?.principalType ?? null) as PrincipalKind | null,
      principalId: principal?.id ?? null,
    };
  });
  for (let from = 0; from < rows.length; from += INSERT_ROWS) await db.insertInto('documentAttribution').values(rows.slice(from, from + INSERT_ROWS)).execute();
}

/** Ranges built from the store, and how far: the snapshot they were read against and the last log row claimed. */
export type LoadedAttribution = { ranges: ClockRanges; uptoSeq: number; lastSeq: number };

/**
 * Who made each item of the document as stored: the folded ranges, then
 * the unfolded log in order, read in one repeatable-read transaction so a
 * compaction committing in between cannot drop rows from both. Given what
 * an earlier load returned, and no fold since (the snapshot is where it
 * was), only the log rows after it are read, into the same ranges: appends
 * to one document commit in sequence order (document-log-heads.ts), so
 * none is skipped.
 */
export async function loadAttribution(db: Executor, document: string, earlier?: LoadedAttribution): Promise<LoadedAttribution> {
  if (!db.isTransaction) return (db as Db).transaction().setIsolationLevel('repeatable read').execute((tx) => loadAttribution(tx, document, earlier));
  const snapshot = await db.selectFrom('documentSnapshots').select('uptoSeq').where('document', '=', document).executeTakeFirst();
  const uptoSeq = Number(snapshot?.uptoSeq ?? 0);
  const from = earlier && earlier.uptoSeq === uptoSeq ? earlier : null;
  const ranges = from?.ranges ?? new ClockRanges();
  if (!from) await claimFolded(db, document, ranges);
  // From the snapshot on: what it folded is in the table (a run reaching past it stays in the log whole).
  const lastSeq = await claimLog(db, document, ranges, from?.lastSeq ?? uptoSeq, null);
  return { ranges, uptoSeq, lastSeq: Math.max(lastSeq, from?.lastSeq ?? 0) };
}

/** Rows the table holds for a document (tests, benchmarks). */
export async function countAttributionRows(db: Executor, document: string): Promise<number> {
  const row = await db.selectFrom('documentAttribution').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', document).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The user who owns each agent (absent: not an agent, or gone). */
export async function findAgentOwners(db: Executor, agentIds: readonly string[]): Promise<Map<string, string>> {
  if (agentIds.length === 0) return new Map();
  const rows = await db.selectFrom('agents').select(['id', 'ownerUserId']).where('id', 'in', [...new Set(agentIds)]).execute();
  return new Map(rows.map((row) => [row.id, row.ownerUserId]));
}
