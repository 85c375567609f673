import type * as Y from 'yjs';
import type { Executor, Tx } from '../persistence/database';
import type { AppendedRow, AppendHead } from '../persistence/document-log';
import type { CommitReceipt } from './document-sync';

export type ObservedChange<Derived = unknown> = { derived: Derived; origin: unknown; seqs: readonly number[]; run: string | null };

/**
 * What the engine asks of the observer (src/events/observer.ts): derive a
 * summary of a committed transaction synchronously (Y transactions do not
 * outlive their callbacks), then persist it (events, projections) inside the
 * database transaction that also logs the update when the server made it.
 * The observer sits above the engine's rank, so it is handed in at bootstrap
 * and the engine only knows this interface.
 */
export interface TransactionObserver<Derived = unknown> {
  /** `run`: the run the change joins (docs/RUNS.md): its details are recorded with its events. */
  derive(documentName: string, doc: Y.Doc, transaction: Y.Transaction, run: string | null): Derived | null;
  /**
   * Events and projections of consecutive changes of one document, in the
   * engine's transaction. A change from a sync client carries the log
   * sequence numbers of its update (`seqs`): its events get keys from them
   * (so deriving the update twice records them once), and they are marked
   * derived in this transaction unless the observer returns them as
   * `deferred` (it then marks them itself when it records their events,
   * e.g. coalesced typing). `receipts` (by position in `changes`) is what
   * each change's caller gets back from `transactWithReceipt`.
   *
   * `append`, the commit's log append of its server changes (document-log.ts
   * `appendHead`): the observer writes it before any other write of its
   * own, in one of its statements where it can, and returns the rows it
   * appended as `appended` (absent or null: the caller appends them).
   */
  persist(
    tx: Tx,
    documentName: string,
    changes: ObservedChange<Derived>[],
    append?: AppendHead | null,
  ): Promise<{ publish(): void; deferred: number[]; receipts?: Array<CommitReceipt | undefined>; appended?: AppendedRow[] | null }>;
  /**
   * `persist` with no transaction open, for a commit of server changes
   * only: the observer writes everything, the append included, in one
   * statement (atomic on its own), or writes nothing and answers null (the
   * engine then persists the changes in a transaction).
   */
  persistAlone?(
    db: Executor,
    documentName: string,
    changes: ObservedChange<Derived>[],
    append: AppendHead,
  ): Promise<{ publish(): void; deferred: number[]; receipts?: Array<CommitReceipt | undefined>; appended?: AppendedRow[] | null } | null>;
  /** After a client's change is durable: enforce caps that a CRDT cannot refuse up front. */
  afterClientChange?(documentName: string, derived: Derived): Promise<void>;
  /** Records whatever it holds back (coalesced typing events) before shutdown. */
  flush?(): Promise<void>;
  /** Records what it holds back for one document, so its updates count as derived (compaction folds only derived updates). */
  settle?(documentName: string): Promise<void>;
  /**
   * After the engine rebuilt a document from its log (a commit failed) or
   * derived missed events again: forget what was derived from the old state
   * and rewrite the document's projections from `doc`, so they agree with
   * the log.
   */
  reproject?(tx: Tx, documentName: string, doc: Y.Doc): Promise<void>;
}
