import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A chain of awaits that resolve as microtasks (PGlite's queries, the
 * records of a parser reading a buffered stream) never hands the event loop
 * back: sockets go unread, timers and signals wait. Work that may run long
 * checks between its steps: once the current turn of the event loop has
 * run longer than the budget, it waits for the next turn; a turn of short
 * steps pays one clock reading each.
 */
export class EventLoopTurns {
  private turnStarted: number;
  private markerPending = false;

  constructor(
    private readonly budgetMs: number,
    /** A shorter budget for while `when()` says other work waits (asked only once a turn is past `budgetMs` of this). */
    private readonly urgent?: { budgetMs: number; when: () => boolean },
    private readonly now: () => number = () => performance.now(),
  ) {
    this.turnStarted = now();
  }

  /** Whether this turn has run past the budget (then `await nextTurn()`); a plain call, for loops that should not make a promise per step. */
  isLong(): boolean {
    this.markTurn();
    const elapsed = this.now() - this.turnStarted;
    if (elapsed > this.budgetMs) return true;
    return this.urgent !== undefined && elapsed > this.urgent.budgetMs && this.urgent.when();
  }

  /** When the current turn began (as far as it has been noted): identifies the turn. */
  get turnStart(): number {
    this.markTurn();
    return this.turnStarted;
  }

  async yieldIfLong(): Promise<void> {
    if (this.isLong()) await this.nextTurn();
  }

  /** The next turn of the event loop (the turn's start is noted first: its marker was scheduled before). */
  async nextTurn(): Promise<void> {
    await nextTurn();
  }

  /** Notes when the event loop next turns: an immediate runs only once the microtask queue is empty. */
  private markTurn() {
    if (this.markerPending) return;
    this.markerPending = true;
    setImmediate(() => {
      this.markerPending = false;
      this.turnStarted = this.now();
    });
  }
}
