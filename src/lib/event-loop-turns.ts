import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * When the current turn of the event loop began, as far as it has been
 * noted: an immediate scheduled at the first look runs only once the
 * microtask queue is empty, and notes the time.
 */
class TurnClock {
  private started: number;
  private markerPending = false;

  constructor(readonly now: () => number) {
    this.started = now();
  }

  turnStart(): number {
    if (!this.markerPending) {
      this.markerPending = true;
      setImmediate(() => {
        this.markerPending = false;
        this.started = this.now();
      });
    }
    return this.started;
  }
}

/**
 * One clock for every part of the serving thread that hands the event loop
 * back (queued sync messages, the embedded database's statements, imports
 * and conversions). Each counts its budget from the same start: with a clock
 * each, their slices ran back to back in one turn (10 ms of messages, then
 * 20 ms of statements from where the statements' own clock began, ...), and
 * the turn was the sum of the budgets plus each one's last step.
 */
const servingThread = new TurnClock(() => performance.now());

/**
 * A chain of awaits that resolve as microtasks (PGlite's queries, the
 * records of a parser reading a buffered stream) never hands the event loop
 * back: sockets go unread, timers and signals wait. Work that may run long
 * checks between its steps: once the current turn of the event loop has
 * run longer than the budget, it waits for the next turn; a turn of short
 * steps pays one clock reading each.
 */
export class EventLoopTurns {
  private readonly clock: TurnClock;

  constructor(
    private readonly budgetMs: number,
    /** A shorter budget for while `when()` says other work waits (asked only once a turn is past `budgetMs` of this). */
    private readonly urgent?: { budgetMs: number; when: () => boolean },
    /** A clock of its own (tests move it by hand); by default the serving thread's, shared. */
    now?: () => number,
  ) {
    this.clock = now ? new TurnClock(now) : servingThread;
  }

  /** Whether this turn has run past the budget (then `await nextTurn()`); a plain call, for loops that should not make a promise per step. */
  isLong(): boolean {
    const elapsed = this.clock.now() - this.clock.turnStart();
    if (elapsed > this.budgetMs) return true;
    return this.urgent !== undefined && elapsed > this.urgent.budgetMs && this.urgent.when();
  }

  /** When the current turn began (as far as it has been noted): identifies the turn. */
  get turnStart(): number {
    return this.clock.turnStart();
  }

  async yieldIfLong(): Promise<void> {
    if (this.isLong()) await this.nextTurn();
  }

  /** The next turn of the event loop (the turn's start is noted first: its marker was scheduled before). */
  async nextTurn(): Promise<void> {
    await nextTurn();
  }
}
