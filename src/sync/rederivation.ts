import type { Document } from '@hocuspocus/server';
import type { Logger } from 'pino';
import type { Failpoints } from '../lib/failpoints';
import type { Db } from '../persistence/database';
import { listUnderivedUpdates, markUpdatesDerived } from '../persistence/document-log';
import { claimUnderived, type InstanceLease } from '../persistence/instances';
import { findPrincipals } from '../persistence/workspaces';
import type { Principal } from '../policy/actor';
import { replayUnderived } from './document-store';
import { OrphanedUpdates } from './orphaned-updates';
import { serverOrigin, SYSTEM_PRINCIPAL } from './origins';
import type { ObservedChange, TransactionObserver } from './transaction-observer';

/**
 * Logged updates whose events and projections were never committed, derived
 * again from the log: a client's change whose commit failed in this process
 * (retried by the sweeper until it succeeds), updates a crash left
 * underived (after the document's next load), and those of an instance that
 * died (orphaned-updates.ts, found by every instance's sweep). Projections
 * a failure left behind are rewritten from the loaded document.
 */
export class Rederivation {
  /** Per document: logged updates of this process whose events still have to be derived again (retried by the sweeper). */
  private readonly pending = new Map<string, Set<number>>();
  /** Documents whose projections could not be rewritten yet; the sweeper tries again. */
  private readonly staleProjections = new Set<string>();
  /** Documents loaded with updates still to derive: after the load, those no live instance will derive are derived here. */
  private readonly loadedUnderived = new Set<string>();
  /** Updates whose instance died before deriving them: derived here, whoever has their document open. */
  private readonly orphans: OrphanedUpdates;

  constructor(
    private readonly deps: {
      db: Db;
      log: Logger;
      failpoints: Failpoints;
      instance: InstanceLease;
      observer(): TransactionObserver | undefined;
      enqueue(documentName: string, task: () => Promise<unknown>): Promise<void>;
      /** Loads (and holds) the document. */
      open(documentName: string): Promise<unknown>;
      /** The document as loaded, if it is. */
      document(documentName: string): Document | undefined;
    },
  ) {
    this.orphans = new OrphanedUpdates({ db: deps.db, instance: deps.instance, log: deps.log, derive: (name) => this.deriveOrphans(name) });
  }

  start() {
    this.orphans.start();
  }

  stop() {
    this.orphans.stop();
  }

  /** A document was loaded with `underived` updates in its tail: after the load, those no live instance will derive are derived. */
  loaded(documentName: string, underived: number) {
    if (underived > 0) this.loadedUnderived.add(documentName);
  }

  /** After the load: events a crash kept from being recorded are derived again, before any new change's (those of a live instance are its own to derive). */
  afterLoad(documentName: string) {
    if (this.loadedUnderived.delete(documentName)) void this.deps.enqueue(documentName, () => this.deriveOrphansNow(documentName)).catch(() => {});
  }

  /** A client's change stays applied (it is in the log) though its commit failed: its events are derived again from the log, and projections rewritten. */
  async clientChangesFailed(documentName: string, seqs: readonly number[]) {
    let pending = this.pending.get(documentName);
    if (!pending) this.pending.set(documentName, (pending = new Set()));
    for (const seq of seqs) pending.add(seq);
    await this.retry(documentName);
  }

  /** The sweeper: projections and derivations that failed, tried again in their documents' queues. */
  async sweep() {
    for (const name of [...this.staleProjections]) await this.deps.enqueue(name, () => this.reproject(name)).catch(() => {});
    for (const name of [...this.pending.keys()]) await this.deps.enqueue(name, () => this.retry(name)).catch(() => {});
  }

  /** Rewrites a loaded document's projections from its current state (after a failure left them behind). */
  async reproject(documentName: string) {
    const document = this.deps.document(documentName);
    const observer = this.deps.observer();
    if (!document || !observer?.reproject) return;
    try {
      await this.deps.db.transaction().execute((tx) => observer.reproject!(tx, documentName, document));
      this.staleProjections.delete(documentName);
    } catch (error) {
      this.staleProjections.add(documentName);
      this.deps.log.error({ err: error, documentName }, 'could not rewrite projections; will try again');
    }
  }

  /** Derives again what this process failed to derive (a failed commit); what stays pending is retried by the sweeper. */
  private async retry(documentName: string) {
    const pending = this.pending.get(documentName);
    if (!pending) return;
    const seqs = [...pending];
    if (!(await this.deriveAgain(documentName, seqs))) return;
    for (const seq of seqs) pending.delete(seq);
    if (pending.size === 0) this.pending.delete(documentName);
  }

  /** The orphan sweep (orphaned-updates.ts): the document's updates left by a dead instance, derived in its queue (loading it first). */
  private async deriveOrphans(documentName: string) {
    await this.deps.open(documentName);
    await this.deps.enqueue(documentName, () => this.deriveOrphansNow(documentName));
  }

  private async deriveOrphansNow(documentName: string) {
    const seqs = await this.orphans.of(documentName);
    if (seqs.length > 0 && !(await this.deriveAgain(documentName, seqs))) throw new Error(`could not derive ${seqs.length} updates of ${documentName}`);
  }

  /**
   * Once: the updates of a document whose events were never committed (the
   * process that logged them died between a client's update and its events,
   * or their commit failed) are replayed from the log in a scratch
   * document, each in its own transaction attributed to its author, and
   * their events and projections committed as if they had just arrived.
   * Event keys come from the updates' sequence numbers, and the commit first
   * claims the updates under the document's log lock (another instance may
   * be deriving them too: the one that finds them still underived records
   * them, the other reads again). The loaded document's projections are then
   * rewritten from its full state. Resolves whether the updates are derived.
   */
  private async deriveAgain(documentName: string, seqs: readonly number[]): Promise<boolean> {
    const observer = this.deps.observer();
    if (!observer || seqs.length === 0) return true;
    let derived = 0;
    try {
      for (let attempt = 1; ; attempt++) {
        const underived = await listUnderivedUpdates(this.deps.db, documentName);
        const wanted = new Set(seqs);
        const todo = underived.filter((row) => wanted.has(row.seq));
        if (todo.length === 0) break;
        if (await this.replayAndRecord(documentName, observer, todo)) {
          derived = todo.length;
          break;
        }
        if (attempt === 3) throw new Error('other instances kept deriving the same updates first');
      }
    } catch (error) {
      this.deps.log.error({ err: error, documentName }, 'could not derive the events of logged updates again; will try again');
      return false;
    }
    if (derived > 0) this.deps.log.info({ documentName, updates: derived }, 'derived the events of logged updates again');
    await this.reproject(documentName);
    return true;
  }

  /** Replays `updates` and commits what they derive, if they are still underived when claimed; false when another instance was first. */
  private async replayAndRecord(
    documentName: string,
    observer: TransactionObserver,
    updates: Array<{ seq: number; principalId: string | null; runId: string | null }>,
  ): Promise<boolean> {
    const seqs = updates.map((u) => u.seq);
    const authors = await this.authorsOf(updates);
    const runs = new Map(updates.map((u) => [u.seq, u.runId]));
    const changes: ObservedChange[] = [];
    await replayUnderived(
      this.deps.db,
      documentName,
      (update) => serverOrigin(authors.get(update.seq) ?? SYSTEM_PRINCIPAL, 'replay', runs.get(update.seq) ?? null),
      (doc, transaction, update) => {
        const run = runs.get(update.seq) ?? null;
        const derived = observer.derive(documentName, doc, transaction, run);
        changes.push({ derived, origin: transaction.origin, seqs: [update.seq], run });
      },
      new Set(seqs),
    );
    let publish: (() => void) | undefined;
    const claimed = await this.deps.db.transaction().execute(async (tx) => {
      if (!(await claimUnderived(tx, documentName, seqs))) return false;
      const observed = changes.filter((c) => c.derived != null);
      if (observed.length > 0) ({ publish } = await observer.persist(tx, documentName, observed));
      // Every claimed update, also one that changed nothing (a client's resend).
      await markUpdatesDerived(tx, documentName, seqs);
      this.deps.failpoints.hit('document.derived.commit');
      return true;
    });
    if (claimed) publish?.();
    return claimed;
  }

  /** Who made each of these updates, as full principals. */
  private async authorsOf(rows: ReadonlyArray<{ seq: number; principalId: string | null }>): Promise<Map<number, Principal>> {
    const principals = await findPrincipals(
      this.deps.db,
      rows.flatMap((r) => (r.principalId ? [r.principalId] : [])),
    );
    const authors = new Map<number, Principal>();
    for (const row of rows) {
      const principal = row.principalId ? principals.get(row.principalId) : undefined;
      if (principal) authors.set(row.seq, principal);
    }
    return authors;
  }
}
