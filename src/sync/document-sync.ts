import type { Server as HttpServer } from 'node:http';
import type * as Y from 'yjs';
import type { RowMeta } from '../persistence/table-rows';
import type { ServerOrigin } from './origins';

/**
 * What the commit of a change stored that its caller may answer with: a
 * table change's rows, attribution and timestamps as stored, and the log
 * position of the server change's update (absent when it changed nothing).
 */
export type CommitReceipt = { rows?: ReadonlyMap<string, RowMeta>; seq?: number };

/**
 * What the rest of the server may ask of the sync engine (src/sync/engine.ts):
 * apply a change to a document durably, read one, and the lifecycle. Routes
 * and domain code depend on this, not on the engine, so `Services` does not
 * import the engine that is built from it.
 */
export interface DocumentSync {
  /**
   * Runs `change` on the document as one Y transaction attributed to
   * `origin`. Resolves once the update, its events and its projections are
   * committed; only then do connected clients receive it. Rejects (and no
   * client ever sees the change) when the commit fails.
   */
  transact<T>(documentName: string, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<T>;
  /** `transact`, also handing back the change's receipt from its commit, so a reply needs no second lookup. */
  transactWithReceipt<T>(documentName: string, origin: ServerOrigin, change: (doc: Y.Doc) => T): Promise<{ result: T; receipt: CommitReceipt }>;
  /** Reads the document as committed (never a change still being committed); do not mutate it. */
  read<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T>;
  /**
   * Reads the document as applied, server changes still being committed
   * included: for the checks of a write about to be made, which commits
   * after them (and fails with them: a failed server change voids those
   * built on it), so it need not wait for their commit. Never for what a
   * caller is shown.
   */
  readApplied<T>(documentName: string, reader: (doc: Y.Doc) => T): Promise<T>;
  /** Resolves once every change applied to the document so far (a sync client's too) is committed, its rows judged by the row cap. */
  changesCommitted(documentName: string): Promise<void>;
  /**
   * Resolves once every change applied so far to the workspace's loaded
   * documents is derived, held-back typing included: what runs changed is
   * then all recorded (docs/RUNS.md).
   */
  settleWorkspace(workspaceId: string): Promise<void>;
  /** Folds a document's log into a snapshot now (benchmarks, tests). */
  compactNow(documentName: string): Promise<void>;
  /** Serves `/api/sync` on the app's own port and starts background work. */
  attach(server: HttpServer): void;
  /** What is open right now (metrics): sync websockets, documents in memory. */
  stats(): { connections: number; documents: number };
  /** Waits until every queued persistence task has finished (tests, shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}
