import {
  CompiledQuery,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { currentRequestId } from '../lib/request-context';
import type { PGlite } from '@electric-sql/pglite';
import { BYTEA_ROWS, PGliteAdapter, queryByteaRows } from './pglite-bytes';
import type { PGliteSession } from './pglite-thread';

/**
 * Kysely dialect for embedded PGlite. PGlite is a single session, so
 * concurrent Kysely transactions would interleave inside it (a rolled-back
 * row can survive). The driver hands out its one connection behind a lock:
 * a transaction holds it from BEGIN to COMMIT and everyone else waits.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGliteSession) {}
  createAdapter() {
    return new PGliteAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();
  private readonly turns = new FairTurns();

  constructor(private readonly pglite: PGliteSession) {
    this.connection = new PGliteConnection(pglite, this.turns);
  }

  async init() {}

  /** The session, once every caller queued before has released it; a caller due to let the event loop turn does so before it queues, not while it holds the session. */
  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.turns.due()) await this.turns.nextTurn();
    let release!: () => void;
    const previous = this.queue;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.connection.acquired(release);
    return this.connection;
  }

  /**
   * `begin` waits for the transaction's first statement: a commit with nothing
   * to write (a keystroke that only joins its typing burst and is logged
   * already, about five a thousand edits of a typist) cost a `begin` and a
   * `commit`, 1.4-3.5 ms of the serving thread, for nothing. The session is
   * held from here to the end either way, so nothing can come between.
   */
  async beginTransaction(connection: DatabaseConnection) {
    (connection as PGliteConnection).beginOnFirstStatement();
  }
  async commitTransaction(connection: DatabaseConnection) {
    if ((connection as PGliteConnection).endTransaction()) await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection) {
    if ((connection as PGliteConnection).endTransaction()) await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
  async savepoint(connection: DatabaseConnection, name: string) {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${name}`));
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string) {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${name}`));
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string) {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${name}`));
  }

  async releaseConnection(connection: DatabaseConnection) {
    (connection as PGliteConnection).release?.();
  }

  async destroy() {
    await this.queue;
    if (!this.pglite.closed) await this.pglite.close();
  }
}

/**
 * PGlite runs each query synchronously inside WASM and resolves its promise
 * as a microtask, so a chain of awaited queries (a compaction, a history
 * pass, a burst of buffered sync messages each waiting on one) never hands
 * the event loop back: sockets go unread, timers and signals wait. Once the
 * current turn has run longer than this, a caller waits for the next turn
 * before it takes the session; a turn of short queries pays nothing. The
 * turn is the serving thread's, counted from its start whoever ran first
 * (src/lib/event-loop-turns.ts): at 20 ms from where the statements began,
 * after 10 ms of sync messages, a turn under a typist held 33-56 ms of the
 * serving thread's CPU (docs/PERFORMANCE.md, issue 38, session 22).
 */
const TURN_BUDGET_MS = 10;

/** How long one HTTP request's statements may run in a turn before they, too, wait for the next (FairTurns). */
const REQUEST_TURN_BUDGET_MS = 20;

/**
 * When a caller of the database lets the event loop turn (TURN_BUDGET_MS),
 * fairly. Under a typing sync client nearly every turn runs long (a batch of
 * its logged updates applied back to back), and when every statement waited
 * for the next turn, and held the session meanwhile, a REST write's seven
 * statements took seven turns of the typist's work, plus one for each
 * statement queued ahead: seconds, where the write itself needs
 * milliseconds (docs/PERFORMANCE.md, issue 38, "REST beside a typist on
 * PGlite"). So:
 *
 * - nobody holds the session across the wait: a caller waits before it
 *   queues, and a transaction (which must hold it) waits only once it has
 *   held the session past the budget itself: a short commit finishes in the
 *   turn it began;
 * - an HTTP request's statements wait only once that request has itself run
 *   past REQUEST_TURN_BUDGET_MS in this turn (a long import or export still lets the
 *   event loop turn every REQUEST_TURN_BUDGET_MS), not because someone else made the
 *   turn long. Work without a request (sync messages, background passes)
 *   waits as before, once the turn is long.
 */
class FairTurns {
  private readonly turns = new EventLoopTurns(TURN_BUDGET_MS);
  /** Per HTTP request with statements in the current turn: that turn, and when its first statement in it came. */
  private readonly requests = new Map<string, { turn: number; since: number }>();

  /** Whether the caller should let the event loop turn before its next statement. */
  due(): boolean {
    if (!this.turns.isLong()) return false;
    const request = currentRequestId();
    if (request === undefined) return true;
    const turn = this.turns.turnStart;
    const now = performance.now();
    const seen = this.requests.get(request);
    if (seen && seen.turn === turn) return now - seen.since > REQUEST_TURN_BUDGET_MS;
    // Entries of earlier turns are stale; a few hundred requests a turn is far more than one turn serves.
    if (this.requests.size > 256) this.requests.clear();
    this.requests.set(request, { turn, since: now });
    return false;
  }

  nextTurn(): Promise<void> {
    return this.turns.nextTurn();
  }
}

class PGliteConnection implements DatabaseConnection {
  release: (() => void) | undefined;
  private heldSince = 0;
  private statements = 0;
  constructor(
    private readonly pglite: PGliteSession,
    private readonly turns: FairTurns,
  ) {}

  /** A transaction is open but its `begin` not sent yet. */
  private beginPending = false;
  /** A transaction's `begin` was sent. */
  private begun = false;

  acquired(release: () => void) {
    this.release = release;
    this.heldSince = performance.now();
    this.statements = 0;
  }

  beginOnFirstStatement() {
    this.beginPending = true;
    this.begun = false;
  }

  /** Whether the transaction ending sent its `begin` (and so needs its `commit` or `rollback`). */
  endTransaction(): boolean {
    const begun = this.begun;
    this.beginPending = false;
    this.begun = false;
    return begun;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    // The first statement waited (or not) before the session was taken; a later one of a transaction waits only once the transaction has held the session past the budget.
    if (this.statements++ > 0 && performance.now() - this.heldSince > TURN_BUDGET_MS && this.turns.due()) await this.turns.nextTurn();
    if (this.beginPending) {
      this.beginPending = false;
      await this.pglite.query('begin', []);
      this.begun = true;
    }
    if (compiledQuery.sql.startsWith(BYTEA_ROWS)) return { rows: (await this.byteaRows(compiledQuery.sql, compiledQuery.parameters as unknown[])) as R[] };
    const result = await this.pglite.query<R>(compiledQuery.sql, compiledQuery.parameters as unknown[]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      numAffectedRows: affected === undefined ? undefined : BigInt(affected),
    };
  }

  /** A statement marked BYTEA_ROWS: its `bytea` columns as raw bytes (./pglite-bytes.ts), in this thread or the database's. */
  private byteaRows(sql: string, parameters: unknown[]) {
    return 'queryByteaRows' in this.pglite && typeof this.pglite.queryByteaRows === 'function'
      ? this.pglite.queryByteaRows(sql, parameters)
      : queryByteaRows(this.pglite as unknown as PGlite, sql, parameters);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}
