import { sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { whenNeeded } from '../lib/when-needed';
import { lockDocumentLogs } from './document-log-heads';
import type { Database } from './schema';

// Not from ./database, which imports this module: the two would form a circle.
type Db = Kysely<Database>;
type Tx = Transaction<Database>;
type Executor = Db | Tx;

/**
 * Which instances are alive, so that the sync client updates an instance
 * logged but did not live to derive (events, projections) are derived by
 * another (issue 33; docs/SCALING.md, "When an instance dies").
 *
 * Every process that serves sync takes a number (a row of `sync_instances`)
 * and stamps it on the client updates it logs (`document_updates.writer`).
 * On Postgres it holds a session advisory lock on that number for as long as
 * it lives, on a connection of its own: a process that dies, however it
 * dies, loses its connection and Postgres releases the lock at once, so
 * "alive" is "holds its lock", read from `pg_locks` by anyone. A stalled
 * event loop does not make an instance look dead (a heartbeat would). On the
 * embedded database only this process can be alive: an earlier process's
 * number is dead by definition.
 */
export interface InstanceLease {
  /** This process's number, stamped on the client updates it logs. */
  readonly number: number;
  /** The numbers of the instances alive now, this one included. */
  alive(): Promise<number[]>;
  release(): Promise<void>;
}

/** Advisory lock keys are (namespace, number); the namespace is ours alone ("TRIN"). */
const LEASE_NAMESPACE = 0x5452494e;
/** How long a lease connection that dropped waits before it reconnects and takes its lock again. */
const RELOCK_DELAY_MS = 1_000;

async function registerInstance(db: Executor, name: string): Promise<number> {
  const row = await db.insertInto('syncInstances').values({ name }).returning('number').executeTakeFirstOrThrow();
  return row.number;
}

/** The embedded database: one process, so only this one is alive. */
export async function leaseEmbeddedInstance(db: Db, name: string): Promise<InstanceLease> {
  const number = await registerInstance(db, name);
  return { number, alive: async () => [number], release: async () => {} };
}

/**
 * A shared Postgres: the lock is held on a connection of its own (not the
 * pool's, whose connections come and go). If that connection drops while the
 * process lives (a Postgres restart), the lease reconnects and takes the
 * same lock again; meanwhile others may derive this instance's pending
 * updates, and deriving claims each update under its log's lock, so an
 * update is still derived once (see `claimUnderived`).
 */
export async function leaseSharedInstance(db: Db, url: string, name: string, onLost?: (error: unknown) => void): Promise<InstanceLease> {
  const number = await registerInstance(db, name);
  let client: pg.Client | null = null;
  let released = false;
  const lock = async () => {
    const next = new (whenNeeded<typeof pg>('pg').Client)({ connectionString: url, application_name: `trellis-instance-${number}` });
    next.on('error', (error) => {
      if (released || client !== next) return;
      client = null;
      onLost?.(error);
      void next.end().catch(() => {});
      setTimeout(() => void relock(), RELOCK_DELAY_MS).unref();
    });
    await next.connect();
    await next.query('select pg_advisory_lock($1, $2)', [LEASE_NAMESPACE, number]);
    client = next;
  };
  const relock = async () => {
    if (released || client) return;
    await lock().catch((error) => {
      onLost?.(error);
      if (!released) setTimeout(() => void relock(), RELOCK_DELAY_MS).unref();
    });
  };
  await lock();
  return {
    number,
    alive: async () => {
      const rows = await sql<{ number: number }>`
        select objid::int8 as number from pg_locks
        where locktype = 'advisory' and granted and objsubid = 2
          and classid = ${LEASE_NAMESPACE}::int8::oid
          and database = (select oid from pg_database where datname = current_database())`.execute(db);
      return rows.rows.map((row) => Number(row.number));
    },
    release: async () => {
      released = true;
      const held = client;
      client = null;
      await held?.end().catch(() => {});
    },
  };
}

/**
 * Client updates still to derive whose instance is not alive, by document,
 * in log order (at most `limit`; of one document if given). Rows logged before writers were recorded
 * count as orphaned: nobody alive logged them.
 */
export async function listOrphanedUpdates(
  db: Executor,
  alive: readonly number[],
  options: { document?: string; limit?: number } = {},
): Promise<Map<string, number[]>> {
  const rows = await sql<{ document: string; seq: number | string }>`
    select document, seq from underived_updates, unnest(seqs) as seq
    where ${options.document === undefined ? sql`true` : sql`document = ${options.document}`}
      and ${alive.length === 0 ? sql`true` : sql`(writer is null or writer <> all(${`{${alive.join(',')}}`}::int[]))`}
    order by seq limit ${options.limit ?? 10_000}`.execute(db);
  const byDocument = new Map<string, number[]>();
  for (const row of rows.rows) {
    const seqs = byDocument.get(row.document);
    if (seqs) seqs.push(Number(row.seq));
    else byDocument.set(row.document, [Number(row.seq)]);
  }
  return byDocument;
}

/**
 * Claims updates for derivation inside the transaction that records what
 * they derive: locks the document's log head (so two instances deriving the
 * same updates take turns) and answers whether every one of `seqs` is still
 * underived. When one is not, another instance derived it first: the caller
 * rolls back and reads again.
 */
export async function claimUnderived(tx: Tx, document: string, seqs: readonly number[]): Promise<boolean> {
  if (seqs.length === 0) return true;
  await lockDocumentLogs(tx, [document]);
  const row = await sql<{ count: number | string }>`
    select count(distinct seq) as count from underived_updates, unnest(seqs) as seq
    where document = ${document} and seq = any(${`{${seqs.join(',')}}`}::bigint[])`.execute(tx);
  return Number(row.rows[0]!.count) === new Set(seqs).size;
}
