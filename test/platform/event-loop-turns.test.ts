import { describe, expect, it } from 'vitest';
import { EventLoopTurns } from '../../src/lib/event-loop-turns';

/**
 * Several parts of the serving thread hand the event loop back once the
 * turn has run past their budget: queued sync messages (src/sync/engine.ts),
 * the embedded database's statements (src/persistence/pglite-dialect.ts),
 * imports and conversions. Their slices resume in the same turn, one after
 * another; each must count its budget from the turn's start, not from where
 * its own slice began, or the turn is the sum of every budget.
 */
function spin(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const inTurn = <T>(work: () => T) => new Promise<T>((resolve) => setImmediate(() => resolve(work())));

describe('turns of the serving thread', () => {
  it("count every part's budget from the turn's start: a part resuming after another's slice in the same turn hands the loop back at once", async () => {
    const messages = new EventLoopTurns(10);
    const statements = new EventLoopTurns(10);
    await inTurn(() => {});
    // Both look at the turn before the next one starts, as each does before it yields.
    messages.isLong();
    const slice = inTurn(() => {
      spin(15);
      return messages.isLong();
    });
    statements.isLong();
    const afterTheSlice = inTurn(() => statements.isLong());
    expect(await slice).toBe(true);
    expect(await afterTheSlice).toBe(true);
  });

  it('start a new turn after one is handed back: the next slice has its whole budget', async () => {
    const messages = new EventLoopTurns(10);
    await inTurn(() => {});
    messages.isLong();
    await inTurn(() => spin(15));
    expect(messages.isLong()).toBe(true);
    await messages.nextTurn();
    expect(messages.isLong()).toBe(false);
  });

  it('keep a clock of their own when given one (the budgets below are counted on it, not in time)', () => {
    let now = 0;
    const turns = new EventLoopTurns(10, undefined, () => now);
    now = 9;
    expect(turns.isLong()).toBe(false);
    now = 11;
    expect(turns.isLong()).toBe(true);
  });
});
