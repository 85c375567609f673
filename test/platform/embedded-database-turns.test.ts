import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWithRequestId } from '../../src/lib/request-context';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { freshDataStore, testDatabaseUrl } from '../helpers/database';

/**
 * The embedded database is one session shared by everything in the process
 * (src/persistence/pglite-dialect.ts). Under a typing sync client nearly
 * every turn of the event loop runs long, and a caller lets the event loop
 * turn before its statement once it has. An HTTP request's few statements
 * must not pay a turn each (and one more for each statement of the sync
 * path queued ahead), or a REST write beside a typist waits seconds.
 * Counted in turns of the event loop, not in time.
 */
const onPostgres = Boolean(testDatabaseUrl());

/** Something that makes every turn of the event loop long, as applying a typist's logged updates does: 25 ms of work each turn. */
function busyTurns() {
  let turns = 0;
  let stopped = false;
  const turn = () => {
    if (stopped) return;
    turns++;
    const until = performance.now() + 25;
    while (performance.now() < until);
    setImmediate(turn);
  };
  setImmediate(turn);
  return {
    get turns() {
      return turns;
    },
    stop() {
      stopped = true;
    },
  };
}

describe.skipIf(onPostgres)('the embedded database under long turns of the event loop', () => {
  let store: Awaited<ReturnType<typeof freshDataStore>>;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    store = await freshDataStore();
    handle = await openDatabase({ dataDir: store.dataDir });
  });
  afterAll(async () => {
    await handle?.close();
    await store?.dispose();
  });

  it("answers a request's statements within a few turns while statements outside any request keep queueing for the session", async () => {
    const busy = busyTurns();
    let background = 0;
    let stopBackground = false;
    // The sync path's stand-in: one statement after another, outside any request.
    const sync = (async () => {
      while (!stopBackground) {
        await sql`select 1`.execute(handle.db);
        background++;
      }
    })();
    try {
      // Let the background statements settle into the long turns.
      while (busy.turns < 3) await new Promise((resolve) => setImmediate(resolve));
      const before = busy.turns;
      const backgroundBefore = background;
      await runWithRequestId('req-turns', async () => {
        // Lookups and a commit, twelve statements in order (a REST create has about seven).
        for (let i = 0; i < 10; i++) await sql`select ${i}::int as i`.execute(handle.db);
        await handle.db.transaction().execute(async (tx) => {
          await sql`select 1`.execute(tx);
          await sql`select 2`.execute(tx);
        });
      });
      // Each used to wait a turn, holding the session meanwhile (5-9 turns for seven); a turn or two now, a few on a loaded machine.
      expect(busy.turns - before).toBeLessThanOrEqual(4);
      // The statements outside the request are not starved: they go on within a few turns (during the request or right after it).
      const requestDone = busy.turns;
      while (background === backgroundBefore && busy.turns - requestDone <= 4) await new Promise((resolve) => setImmediate(resolve));
      expect(background).toBeGreaterThan(backgroundBefore);
    } finally {
      stopBackground = true;
      busy.stop();
      await sync;
    }
  });
});
