import type { Logger } from 'pino';
import type { Clock } from '../lib/clock';
import type { Failpoints } from '../lib/failpoints';
import type { Db } from '../persistence/database';
import { compact, COMPACT_AFTER_BYTES, COMPACT_QUIET_MS, compactionDue, compactionUrgent, type CompactResult, type LoadResult } from './document-store';

/** A compaction held back by derivation runs again after this long (typing bursts end after 2 s without an edit), at most this many times without folding. */
const FOLLOW_UP_MS = 2_500;
const FOLLOW_UP_ATTEMPTS = 8;
/** Backpressure starts when a document's unfolded log holds this many compactions' worth (see keepPace). */
const PACE_FACTOR = 10;
const PACE_WAIT_MS = 2_000;

type Tail = { updates: number; bytes: number; snapshotBytes: number };
/** `fired`: its compaction was queued (a refreshed timer would fire again). */
type FollowUp = { timer: NodeJS.Timeout; idle: number; fired: boolean };

/**
 * When each loaded document's log is folded into a snapshot
 * (document-store.ts `compact`): counts what is appended after each load,
 * starts a compaction when one is due (at once by count, after a quiet
 * second by bytes), tries a fold held back by derivation or history again
 * shortly, and slows a client whose stream outruns the compactions it
 * causes (`keepPace`). What a compaction does is document-store.ts's; this
 * only decides when, one at a time per document.
 */
export class CompactionSchedule {
  private readonly tails = new Map<string, Tail>();
  /** Per document: rows in the unfolded log as far as this process knows (set by each compaction, counted up by appends). */
  private readonly unfolded = new Map<string, number>();
  /** Per document: whether its last compaction was held back by history or derivation still to catch up (not by a held base). */
  private readonly behind = new Map<string, boolean>();
  /** Per document: a compaction due by bytes, waiting for its appends to pause (compactionUrgent); `drain` starts it at once. */
  private readonly quietCompactions = new Map<string, { timer: NodeJS.Timeout; start: () => void }>();
  /** Documents with a compaction queued and not started yet: one covers everything logged before it starts. */
  private readonly compactionQueued = new Set<string>();
  /** Per document: the newest compaction queued or running. */
  private readonly compactions = new Map<string, Promise<void>>();
  /** Per document: a compaction to run again soon, and how many in a row folded nothing. */
  private readonly followUps = new Map<string, FollowUp>();

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: Logger;
      failpoints: Failpoints;
      /** COMPACT_AFTER_UPDATES as configured. */
      compactAfterUpdates: number;
      /**
       * Marks derived what the document's updates are only waiting on to count
       * as derived (coalesced typing, updates that derived nothing): the fold
       * stops at the first underived update.
       */
      settle(documentName: string): Promise<void>;
    },
  ) {}

  /** A document was loaded with `loaded` after its snapshot: counting starts there. */
  loaded(documentName: string, loaded: LoadResult) {
    this.tails.set(documentName, { updates: loaded.tailUpdates, bytes: loaded.tailBytes, snapshotBytes: loaded.snapshotBytes });
    this.unfolded.set(documentName, loaded.tailUpdates);
  }

  unloaded(documentName: string) {
    this.tails.delete(documentName);
    this.unfolded.delete(documentName);
    this.behind.delete(documentName);
  }

  /** One update of `bytes` was logged for the document. */
  appended(documentName: string, bytes: number) {
    this.unfolded.set(documentName, (this.unfolded.get(documentName) ?? 0) + 1);
    const tail = this.tails.get(documentName) ?? { updates: 0, bytes: 0, snapshotBytes: 0 };
    tail.updates += 1;
    tail.bytes += bytes;
    this.tails.set(documentName, tail);
    // A large document's follow-up waits for its appends to pause: each fold rewrites the whole snapshot, and
    // one every 2.5 s through a slow bulk write rewrote a 50,000-row table 16 times (PERFORMANCE.md "h8-cold").
    const followUp = this.followUps.get(documentName);
    if (followUp && !followUp.fired && tail.snapshotBytes >= COMPACT_AFTER_BYTES) followUp.timer.refresh();
    const afterUpdates = this.deps.compactAfterUpdates;
    if (!compactionDue(tail, afterUpdates)) return;
    clearTimeout(this.quietCompactions.get(documentName)?.timer);
    this.quietCompactions.delete(documentName);
    const start = () => {
      this.quietCompactions.delete(documentName);
      // Not for a document unloaded meanwhile: its next load counts its tail anew.
      if (this.tails.get(documentName) === tail) this.tails.set(documentName, { updates: 0, bytes: 0, snapshotBytes: tail.snapshotBytes });
      this.queue(documentName);
    };
    if (compactionUrgent(tail, afterUpdates)) start();
    else this.quietCompactions.set(documentName, { timer: setTimeout(start, COMPACT_QUIET_MS).unref(), start });
  }

  /**
   * Compaction runs beside the document's persistence queue, not in it: a
   * history pass and a fold never hold back the commits that derive
   * clients' updates (which compaction waits for). Passes and folds of one
   * document take turns through the history lock, and a load reads the
   * snapshot and the log in one snapshot-consistent read.
   */
  private queue(documentName: string) {
    if (this.compactionQueued.has(documentName)) return;
    this.compactionQueued.add(documentName);
    const previous = this.compactions.get(documentName) ?? Promise.resolve();
    const run = previous.then(() => {
      this.compactionQueued.delete(documentName);
      return this.compactNow(documentName);
    });
    this.compactions.set(documentName, run);
    void run.finally(() => {
      if (this.compactions.get(documentName) === run) this.compactions.delete(documentName);
    });
  }

  async compactNow(documentName: string) {
    try {
      // Updates held back for a coalesced event, or that derived nothing, count as underived until marked: the fold
      // would stop at them until a typing burst ends or the sweeper comes, which a stream can put off indefinitely.
      await this.deps.settle(documentName);
      await this.deps.failpoints.pass('document.compact');
      const result = await compact(this.deps.db, documentName, this.deps.clock.now(), this.deps.failpoints);
      const tail = this.tails.get(documentName);
      if (result && tail && result.folded > 0) tail.snapshotBytes = result.bytes;
      this.deps.log.debug({ documentName, ...result }, 'compacted');
      if (result) this.unfolded.set(documentName, result.remaining);
      // Only a compaction that got somewhere paces clients: waiting for one that folds nothing (derivation
      // lagging behind the stream) would admit one message per compaction and never let the lag close.
      this.behind.set(documentName, (result?.blockedBy === 'history' || result?.blockedBy === 'underived') && result.folded > 0);
      this.followUp(documentName, result);
    } catch (error) {
      this.deps.log.warn({ err: error, documentName }, 'compaction failed; the log still holds every update');
    }
  }

  /**
   * Backpressure: while a document's unfolded log is over PACE_FACTOR
   * compactions' worth and its compaction is behind (history or derivation
   * still catching up), a client's next update waits for the running
   * compaction, at most PACE_WAIT_MS. A stream faster than the background
   * work it causes is slowed to that work's pace instead of growing the log
   * (and the next load) without bound. Held bases never slow anyone.
   */
  keepPace(documentName: string): Promise<void> | undefined {
    // Undefined when no wait is due: the caller, on every client update, then makes no promise.
    if ((this.unfolded.get(documentName) ?? 0) <= this.deps.compactAfterUpdates * PACE_FACTOR) return undefined;
    if (this.behind.get(documentName) === false) return undefined;
    return this.waitForPace(documentName);
  }

  private async waitForPace(documentName: string) {
    this.queue(documentName);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.compactions.get(documentName), new Promise<void>((resolve) => (timer = setTimeout(resolve, PACE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /**
   * A fold held back by updates whose events are still being derived (a
   * typing burst in flight) or by history still to index is tried again
   * shortly: the tail of a stream is folded after the stream ends, not when
   * the next few thousand updates come (for a document whose snapshot is
   * COMPACT_AFTER_BYTES or more, each append puts the follow-up off again:
   * until then the stream's own due compactions fold it). A fold held back
   * by a base a read handed out waits for the next due compaction.
   */
  private followUp(documentName: string, result: CompactResult | null) {
    const previous = this.followUps.get(documentName);
    if (previous) clearTimeout(previous.timer);
    this.followUps.delete(documentName);
    if (!result || result.remaining === 0 || (result.blockedBy !== 'underived' && result.blockedBy !== 'history')) return;
    const idle = result.folded > 0 ? 0 : (previous?.idle ?? 0) + 1;
    if (idle > FOLLOW_UP_ATTEMPTS) return;
    const followUp: FollowUp = {
      idle,
      fired: false,
      timer: setTimeout(() => {
        followUp.fired = true;
        if (this.followUps.get(documentName) === followUp) this.queue(documentName);
      }, FOLLOW_UP_MS).unref(),
    };
    this.followUps.set(documentName, followUp);
  }

  /** Starts the compactions waiting for a quiet moment and resolves once every compaction has finished (tests, shutdown). */
  async drain() {
    for (const { timer, start } of [...this.quietCompactions.values()]) {
      clearTimeout(timer);
      start();
    }
    await Promise.all([...this.compactions.values()]);
  }

  /** No more follow-ups (shutdown). */
  stop() {
    for (const { timer } of this.followUps.values()) clearTimeout(timer);
    this.followUps.clear();
  }
}
