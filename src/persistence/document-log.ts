import { sql } from 'kysely';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { base64Of, byteaAsBase64, fromBase64 } from './bytea';
import { runStatement } from './raw-statements';
import type { Executor, Tx } from './database';
import { appendsNeedLock } from './document-log-heads';
import { INSTANCE_ID } from '../lib/instance';
import type { AuthorKind } from '../model/roles';

/** Many Y updates appended to the durable log in one statement per chunk (group commit). */

export type UpdateAuthor = { principalType: AuthorKind; id: string } | null;

export type LoggedUpdate = {
  document: string;
  update: Uint8Array;
  /** Who made it (null: the system or unknown). */
  author: UpdateAuthor;
  /** False for a sync client's update, whose events are committed after it: recorded in `underived_updates` until then (migrations 0007, 0160). */
  derived: boolean;
  /** The number of the instance logging a client's update, which derives it unless it dies first (instances.ts). */
  writer?: number | null;
  /** The run the update joined (docs/RUNS.md). */
  runId?: string | null;
};

/**
 * The most rows, and update bytes, one append statement carries. A pipelining
 * typist's group commit holds thousands of updates; as one statement, PGlite
 * ran it inside the serving thread for 100-460 ms, and on Postgres building
 * and binding it stopped the event loop for tens of milliseconds and left
 * megabytes of strings to collect. In bounded statements the event loop turns
 * between them (a round trip on Postgres; PGlite's driver lets it turn once a
 * transaction has held the session past its budget, pglite-dialect.ts), and
 * the batch still commits as one transaction, once.
 */
export const APPEND_ROWS_PER_STATEMENT = 128;
const APPEND_BYTES_PER_STATEMENT = 128 * 1024;

/**
 * The most updates one append statement carries on a database one session
 * uses, where a statement's updates of one author are one row (a run,
 * below): a run of 512 keystrokes is a row of about 12 KB, and its
 * statement costs about what one of 128 did, so the group commit of a
 * pipelining typist takes a quarter of the statements. At 1,024 the
 * longest append held the serving thread 18 ms, most of a turn's budget
 * (docs/PERFORMANCE.md, issue 38, session 22).
 */
const RUN_UPDATES_PER_STATEMENT = 512;

/** The most updates one append statement carries on `db`. */
export function appendUpdatesPerStatement(db: Executor): number {
  return appendsNeedLock(db) ? APPEND_ROWS_PER_STATEMENT : RUN_UPDATES_PER_STATEMENT;
}

/**
 * Log rows and runs. On a database only one session uses (embedded PGlite,
 * `appendsNeedLock` false), consecutive updates of one statement that share
 * their document, author, writer and run go in one row, a run: `first_seq`
 * set, the updates framed in `update` (each as its length, a varuint, then
 * its bytes), and their sequence numbers `first_seq` to `seq` with none
 * between drawn by anything else. PGlite runs Postgres inside the serving
 * thread, where each inserted row (its heap tuple, two index entries and its
 * WAL record) cost 25-35 µs of the typist's CPU and each row compaction
 * deleted 12 µs more; a run of up to 512 updates is one row. Every update keeps
 * its own sequence number, bytes, author and time: readers expand a run
 * (`updatesOfLogRow`) and see what single rows would have shown. On
 * Postgres, where other sessions draw numbers at the same time, a run's
 * numbers could not be kept contiguous, the rows' cost is the database's
 * process's rather than the serving thread's, and every row is one update.
 *
 * MAX_RUN_SPAN: how far a run's last number may lie past its first, the
 * longest run any version wrote (runs of 1,024 until session 22), not the
 * statement size now: readers look that far past a bound on the index.
 */
export const MAX_RUN_SPAN = 1023;

/** The identity sequence of `document_updates.seq` (migration 0005), which a run's statement advances by its length. */
const LOG_SEQUENCE = 'document_updates_seq_seq';

/** The updates a log row holds with their sequence numbers, in order: one for a single update's row, each of a run's (`first_seq` set). */
export function updatesOfLogRow(seq: number, firstSeq: number | null, bytes: Uint8Array): Array<{ seq: number; update: Uint8Array }> {
  if (firstSeq === null) return [{ seq, update: bytes }];
  const decoder = decoding.createDecoder(bytes);
  const updates: Array<{ seq: number; update: Uint8Array }> = [];
  for (let at = firstSeq; at <= seq; at++) updates.push({ seq: at, update: decoding.readVarUint8Array(decoder) });
  return updates;
}

/** A log row's first sequence number: a run's `first_seq`, a single update's `seq`. */
export const FIRST_SEQ = sql<number>`coalesce(first_seq, seq)`;

/** How many of a log row's updates are in `(afterSeq, uptoSeq]`, for a row that reaches into that range. */
export function updatesHeldIn(afterSeq: number, uptoSeq = Number.MAX_SAFE_INTEGER) {
  return sql<number>`least(seq, ${uptoSeq}) - greatest(${FIRST_SEQ}, ${afterSeq + 1}) + 1`;
}

/** The log rows holding an update at or before `uptoSeq` (with `seq >` a bound, those reaching into a range), still a range of the index: a run reaches back at most MAX_RUN_SPAN. */
export function reachingBackTo(uptoSeq: number) {
  return sql<boolean>`seq <= ${uptoSeq + MAX_RUN_SPAN} and ${FIRST_SEQ} <= ${uptoSeq}`;
}

/**
 * The updates of log rows (`seq`, `firstSeq`, the `update` bytes, and
 * whatever else was selected, shared by a run's updates) in `(afterSeq,
 * uptoSeq]`, in order: a run read because it reaches into the range gives
 * only its updates inside it.
 */
export function updatesOfLogRows<R extends { seq: number | string; firstSeq: number | string | null }>(
  rows: readonly R[],
  bytesOf: (row: R) => Uint8Array,
  afterSeq: number,
  uptoSeq = Number.MAX_SAFE_INTEGER,
): Array<{ row: R; seq: number; update: Uint8Array }> {
  const updates: Array<{ row: R; seq: number; update: Uint8Array }> = [];
  for (const row of rows) {
    for (const { seq, update } of updatesOfLogRow(Number(row.seq), row.firstSeq === null ? null : Number(row.firstSeq), bytesOf(row))) {
      if (seq > afterSeq && seq <= uptoSeq) updates.push({ row, seq, update });
    }
  }
  return updates;
}

/** A log row as `readLogPage` reads it: what a run's updates share. */
export type LogPageRow = { seq: number | string; firstSeq: number | string | null; update: string; createdAt: Date; principalType: AuthorKind | null; principalId: string | null };

/**
 * The logged updates of `document` after `afterSeq` (up to `uptoSeq`), in
 * order, a page of at least `limit` of them unless the log ends first: the
 * rows are read while the updates they hold in the range come to fewer than
 * `limit` before them, so a page of runs decodes at most `limit` plus one
 * run's updates, and a page with fewer than `limit` is the log's last.
 */
export async function readLogPage(
  db: Executor,
  document: string,
  afterSeq: number,
  limit: number,
  uptoSeq = Number.MAX_SAFE_INTEGER,
): Promise<Array<{ row: LogPageRow; seq: number; update: Uint8Array }>> {
  const { rows } = await sql<LogPageRow>`
    select seq, first_seq, encode(update, 'base64') as update, created_at, principal_type, principal_id from (
      select *, sum(held) over (order by seq) - held as held_before from (
        select seq, first_seq, update, created_at, principal_type, principal_id, ${updatesHeldIn(afterSeq, uptoSeq)} as held
        from document_updates
        where document = ${document} and seq > ${afterSeq} and ${reachingBackTo(uptoSeq)}
        order by seq limit ${limit}
      ) as page
    ) as counted
    where held_before < ${limit}
    order by seq`.execute(db);
  return updatesOfLogRows(rows, (row) => fromBase64(row.update), afterSeq, uptoSeq);
}

/** Who made a logged row's updates (null: the system or unknown). */
export function rowAuthor(row: { principalType: AuthorKind | null; principalId: string | null }): UpdateAuthor {
  return row.principalType && row.principalId ? { principalType: row.principalType, id: row.principalId } : null;
}

/** A logged update as `readLoggedUpdates` gives it, a run's each with the run's columns. */
export type LogEntryRead = { seq: number; update: Uint8Array; author: UpdateAuthor; writer: number | null; runId: string | null; createdAt: Date };

/** Every logged update of `document` after `afterSeq`, in order, one an update whether its row holds one or a run (tests, tools). */
export async function readLoggedUpdates(db: Executor, document: string, afterSeq = 0): Promise<LogEntryRead[]> {
  const rows = await db
    .selectFrom('documentUpdates')
    .select(['seq', 'firstSeq', byteaAsBase64('update').as('update'), 'principalType', 'principalId', 'writer', 'runId', 'createdAt'])
    .where('document', '=', document)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .execute();
  return updatesOfLogRows(rows, (row) => fromBase64(row.update), afterSeq).map(({ row, seq, update }) => ({
    seq,
    update,
    author: rowAuthor(row),
    writer: row.writer,
    runId: row.runId,
    createdAt: row.createdAt,
  }));
}

/** A run's `update` value: its updates framed, each after its length. */
function framedRun(rows: ReadonlyArray<LoggedUpdate>, from: number, to: number): Uint8Array {
  const encoder = encoding.createEncoder();
  for (let i = from; i < to; i++) encoding.writeVarUint8Array(encoder, rows[i]!.update);
  return encoding.toUint8Array(encoder);
}

/** Whether two updates can share a run: one document, author, writer and run. */
function sameRun(a: LoggedUpdate, b: LoggedUpdate): boolean {
  return a.document === b.document && a.author?.principalType === b.author?.principalType && a.author?.id === b.author?.id && (a.writer ?? null) === (b.writer ?? null) && (a.runId ?? null) === (b.runId ?? null);
}

/** Where each run of `rows[from, to)` ends (a run is a row of the log). */
function runEnds(rows: ReadonlyArray<LoggedUpdate>, from: number, to: number): number[] {
  const ends: number[] = [];
  for (let i = from + 1; i < to; i++) if (!sameRun(rows[i - 1]!, rows[i]!)) ends.push(i);
  ends.push(to);
  return ends;
}

/** The sequence numbers an append statement returns, `a` or `a-b` for a run, comma-separated, expanded in order. */
function appendedSeqs(text: string, createdAt: Date, into: AppendedRow[]): AppendedRow[] {
  for (const part of text.split(',')) {
    const dash = part.indexOf('-');
    if (dash < 0) {
      into.push({ seq: Number(part), createdAt });
      continue;
    }
    const last = Number(part.slice(dash + 1));
    for (let seq = Number(part.slice(0, dash)); seq <= last; seq++) into.push({ seq, createdAt });
  }
  return into;
}

/**
 * Appends updates in order and returns their sequence numbers, in the same
 * order. Where appends must take turns (document-log-heads.ts), the
 * documents' log heads are locked by the same statement, before it draws a
 * sequence number: appends to one document commit in sequence order
 * whichever instance makes them, and a lone append is one round trip, its
 * own transaction, instead of four.
 */
export async function appendUpdates(db: Executor, rows: ReadonlyArray<LoggedUpdate>): Promise<number[]> {
  return (await appendStampedUpdates(db, rows)).map((row) => row.seq);
}

/** A logged row's sequence number and time, as a read of the log returns them. */
export type AppendedRow = { seq: number; createdAt: Date };

/**
 * `appendUpdates`, with each row's `created_at` as well: the history pass
 * takes what was just appended from memory (src/sync/logged-tail.ts), and
 * its sessions are cut by the logged time, which the database sets.
 */
export async function appendStampedUpdates(db: Executor, rows: ReadonlyArray<LoggedUpdate>): Promise<AppendedRow[]> {
  if (rows.length === 0) return [];
  const locking = appendsNeedLock(db);
  const documents = locking ? [...new Set(rows.map((row) => row.document))].sort() : [];
  const ends = statementEnds(rows, appendUpdatesPerStatement(db));
  // All or nothing: more rows than one statement holds go in one transaction.
  if (ends.length > 1 && !db.isTransaction) return db.transaction().execute((tx) => appendStampedUpdates(tx, rows));
  const appended: AppendedRow[] = [];
  let from = 0;
  for (const to of ends) {
    // The heads stay locked until the transaction ends: the first statement takes them for the rest.
    const { text, parameters } = appendStatement(from === 0 ? documents : [], rows, from, to, !locking);
    const [inserted] = await runStatement<{ seqs: string; createdAt: Date }>(db, text, parameters);
    appendedSeqs(inserted!.seqs, inserted!.createdAt, appended);
    from = to;
  }
  return appended;
}

/** Where each append statement's rows end: at most `maxRows` and APPEND_BYTES_PER_STATEMENT of updates each (a bigger update goes alone), derived or not alike. */
function statementEnds(rows: ReadonlyArray<LoggedUpdate>, maxRows: number): number[] {
  const ends: number[] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    const size = rows[i]!.update.byteLength;
    // A statement's rows are all to derive or all derived: the former also record themselves in `underived_updates`.
    if (i > from && (i - from >= maxRows || bytes + size > APPEND_BYTES_PER_STATEMENT || rows[i]!.derived !== rows[from]!.derived)) {
      ends.push(i);
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  ends.push(rows.length);
  return ends;
}

/** An array literal's element for a text value: quoted, its quotes and backslashes escaped; NULL for null. */
function quotedElement(value: string | null): string {
  if (value === null) return 'NULL';
  return `"${value.includes('"') || value.includes('\\') ? value.replace(/["\\]/g, '\\$&') : value}"`;
}

/**
 * `{a,b,c}`: an array literal of the rows' values of one column. A run of
 * equal values (a group's one document and author) is quoted once.
 */
function columnArray(rows: ReadonlyArray<LoggedUpdate>, from: number, to: number, value: (row: LoggedUpdate) => string | null): string {
  const elements: string[] = [];
  let last: string | null | undefined;
  let element = '';
  for (let i = from; i < to; i++) {
    const v = value(rows[i]!);
    if (v !== last) {
      element = quotedElement(v);
      last = v;
    }
    elements.push(element);
  }
  return `{${elements.join(',')}}`;
}

/** The rows' updates as an array literal of base64 texts: base64's letters need no quotes (an empty update is quoted). */
function updatesArray(rows: ReadonlyArray<LoggedUpdate>, from: number, to: number): string {
  const elements: string[] = [];
  for (let i = from; i < to; i++) elements.push(encodedUpdate(rows[i]!.update));
  return `{${elements.join(',')}}`;
}

/** An update as an element of `updatesArray`'s literal. */
function encodedUpdate(update: Uint8Array): string {
  return update.byteLength === 0 ? '""' : base64Of(update);
}

/**
 * The append as one statement, its SQL written here rather than built
 * through Kysely: a typist's updates are appended thousands a second.
 *
 * The rows go as six parameters, one array a column (`unnest ... with
 * ordinality`), not six parameters a row in a VALUES list: on PGlite, a
 * statement of 128 rows bound, typed and planned 768 parameters and 128
 * VALUES rows of casts and decodes, and the append cost about twice the
 * floor's CPU an update (docs/PERFORMANCE.md, session 16, h16-append).
 * Updates go as base64 text (bytea.ts says why), decoded row by row.
 *
 * With `documents`, the statement first locks their heads (in name order,
 * so two writers never wait on each other crosswise; lockDocumentLogs says
 * why), then inserts the rows in order. The insert reads the count of
 * locked heads as a one-time filter, so Postgres runs the lock to
 * completion before it draws the first sequence number; the rows then take
 * the identity in the arrays' order (`order by` their ordinality).
 *
 * One row comes back, not one a logged update: the sequence numbers as one
 * text in order, and the rows' `created_at`, which is the transaction's
 * `now()` for every row of a statement (the column's default).
 *
 * Rows still to derive (a sync client's, committed before their events)
 * are recorded by the same statement in `underived_updates`, their numbers
 * as one array a document and writer (migration 0160): marking them derived
 * later rewrites that small row, not each logged update.
 */
function appendStatement(documents: readonly string[], rows: ReadonlyArray<LoggedUpdate>, from: number, to: number, runs: boolean): { text: string; parameters: unknown[] } {
  const { ctes, parameters } = appendCtes(documents, rows, from, to, 1, runs);
  return { text: `with ${ctes} select ${APPENDED_SEQS} as seqs, min(created_at) as created_at from appended`, parameters };
}

/** The appended rows' numbers as one text in order: `seq` for a single update's row, `first_seq-seq` for a run (appendedSeqs expands it). */
const APPENDED_SEQS = "string_agg(case when first_seq is null then seq::text else first_seq::text || '-' || seq::text end, ',' order by seq)";

/**
 * The append's common table expressions (`heads as (...), appended as (...)`,
 * and `pending` for rows to derive), their parameters numbered from `first`.
 * With `runs` (one session only: no heads to lock), each run of the rows is
 * one row of the log, its numbers drawn together: `setval` moves the
 * sequence past the run's last number in the statement that drew its first,
 * and no other session draws in between.
 */
function appendCtes(documents: readonly string[], rows: ReadonlyArray<LoggedUpdate>, from: number, to: number, first: number, runs = false): { ctes: string; parameters: unknown[] } {
  return { ctes: appendText(documents.length > 0, runs, rows[from]!.derived, first), parameters: appendParameters(documents, rows, from, to, runs) };
}

/** The append's parameters: one array a column (a run's first update stands for its shared columns), the heads to lock, or the runs' lengths. */
function appendParameters(documents: readonly string[], rows: ReadonlyArray<LoggedUpdate>, from: number, to: number, runs: boolean): unknown[] {
  const ends = runs ? runEnds(rows, from, to) : null;
  const starts = ends ? [from, ...ends.slice(0, -1)] : null;
  const heads = starts ? starts.map((i) => rows[i]!) : rows.slice(from, to);
  const parameters: unknown[] = [
    columnArray(heads, 0, heads.length, (r) => r.document),
    ends && starts ? `{${starts.map((start, i) => (ends[i]! - start === 1 ? encodedUpdate(rows[start]!.update) : base64Of(framedRun(rows, start, ends[i]!)))).join(',')}}` : updatesArray(rows, from, to),
    columnArray(heads, 0, heads.length, (r) => r.author?.principalType ?? null),
    columnArray(heads, 0, heads.length, (r) => r.author?.id ?? null),
    columnArray(heads, 0, heads.length, (r) => (r.writer === null || r.writer === undefined ? null : String(r.writer))),
    columnArray(heads, 0, heads.length, (r) => r.runId ?? null),
  ];
  // The heads to lock, in name order, as one more array (their instance id beside it).
  if (documents.length > 0) parameters.push(`{${documents.map(quotedElement).join(',')}}`, INSTANCE_ID);
  if (ends && starts) parameters.push(`{${starts.map((start, i) => ends[i]! - start).join(',')}}`);
  return parameters;
}

/** The append's common table expressions for `appendParameters`'s parameters numbered from `first` (runs never lock: one session only). */
function appendText(locks: boolean, runs: boolean, derived: boolean, first: number): string {
  const $ = (n: number) => `$${first + n - 1}`;
  const locking = locks
    ? `heads as (insert into document_log_heads (document, writer) select document, ${$(8)} from unnest(${$(7)}::text[]) with ordinality as head (document, n) order by n ` +
      'on conflict (document) do update set writer = excluded.writer, updated_at = now() returning document), '
    : '';
  const columns = `${$(1)}::text[], ${$(2)}::text[], ${$(3)}::text[], ${$(4)}::text[], ${$(5)}::integer[], ${$(6)}::text[]`;
  // A subquery with a volatile output is not flattened: each run draws its numbers once, in the arrays' order.
  const insert = runs
    ? 'insert into document_updates (seq, first_seq, document, update, principal_type, principal_id, writer, run_id) overriding system value ' +
      "select last, case when length > 1 then last - length + 1 end, document, decode(update, 'base64'), principal_type, principal_id, writer, run_id from (" +
      `select *, case when length = 1 then nextval('${LOG_SEQUENCE}') else setval('${LOG_SEQUENCE}', nextval('${LOG_SEQUENCE}') + length - 1) end as last ` +
      `from unnest(${columns}, ${$(7)}::integer[]) with ordinality as logged (document, update, principal_type, principal_id, writer, run_id, length, n) order by n` +
      ') as numbered order by n'
    : 'insert into document_updates (document, update, principal_type, principal_id, writer, run_id) ' +
      "select document, decode(update, 'base64'), principal_type, principal_id, writer, run_id " +
      `from unnest(${columns}) with ordinality as logged (document, update, principal_type, principal_id, writer, run_id, n) ` +
      `${locks ? 'where (select count(*) from heads) > 0 ' : ''}order by n`;
  const pending = derived
    ? ''
    : ', pending as (insert into underived_updates (document, writer, seqs) select document, writer, array_agg(number order by number) from appended, generate_series(coalesce(first_seq, seq), seq) as number group by document, writer)';
  return `${locking}appended as (${insert} returning seq, first_seq, created_at, document, writer)${pending}`;
}

/**
 * An append that rides in another statement of the same transaction (the
 * row projection's upsert: table-rows.ts), one round trip fewer in a REST
 * write's commit. `textFrom(first)` is its common table expressions with
 * the parameters numbered from `first`; the statement returns the
 * `returning` columns, which `appendedOf` reads from a returned row. Where
 * the append locks the log heads (`locks`), the statement must take that
 * lock before any other row lock, as the append's own statement does first
 * in its transaction: it selects its input `where` `lockedFirst`. Only for
 * a batch one statement holds whose rows are all derived (a server
 * change's); null otherwise, and the caller appends on its own. Whoever
 * takes it appends before any other write of theirs: carried, or `alone`.
 */
export type AppendHead = {
  parameters: unknown[];
  textFrom(first: number): string;
  locks: boolean;
  lockedFirst: string;
  returning: string;
  appendedOf(row: Record<string, unknown>): AppendedRow[];
  /** The append in a statement of its own, for a statement that cannot carry it: run before that statement's writes. */
  alone(): Promise<AppendedRow[]>;
};

export function appendHead(db: Executor, rows: ReadonlyArray<LoggedUpdate>): AppendHead | null {
  if (rows.length === 0 || rows.some((row) => !row.derived)) return null;
  if (statementEnds(rows, appendUpdatesPerStatement(db)).length > 1) return null;
  const locking = appendsNeedLock(db);
  const documents = locking ? [...new Set(rows.map((row) => row.document))].sort() : [];
  return {
    // Built once: `textFrom` only numbers them.
    parameters: appendParameters(documents, rows, 0, rows.length, !locking),
    textFrom: (first) => appendText(documents.length > 0, !locking, true, first),
    locks: documents.length > 0,
    lockedFirst: '(select count(*) from heads) > 0',
    // On every row of the statement alike: the appended rows' numbers and their (one) logged time, as the append's own statement returns them.
    returning: `(select ${APPENDED_SEQS} from appended) as appended_seqs, (select min(created_at) from appended) as appended_at`,
    appendedOf: (row) => appendedSeqs(String(row.appendedSeqs), row.appendedAt as Date, []),
    alone: () => appendStampedUpdates(db, rows),
  };
}

/**
 * The most sequence numbers one statement marks derived. Each statement
 * rewrites the few `underived_updates` rows that hold them (an append
 * statement's each), taking the numbers out of their arrays; bounded so
 * that a burst of tens of thousands does not hold PGlite's serving thread
 * in one statement.
 */
const MARKED_PER_STATEMENT = 1_000;

/** The smallest and largest of `seqs` (not empty). */
function boundsOf(seqs: readonly number[]): [number, number] {
  let low = seqs[0]!;
  let high = low;
  for (const seq of seqs) {
    if (seq < low) low = seq;
    if (seq > high) high = seq;
  }
  return [low, high];
}

/**
 * Records that the events and projections of these updates are committed
 * (call in that transaction): their numbers leave `underived_updates`. The
 * numbers go as one array literal a statement; a row between the least and
 * the greatest of them that holds none is written back unchanged (an update
 * held back for a coalesced event sits between two bursts'; rare). Rows a mark emptied are
 * deleted by the document's next one (the same statement deleting a row it
 * also updates would lose one of the two). Outside a transaction (idle
 * updates, which have nothing to derive) each statement commits on its own:
 * marking is idempotent, and the caller notes what a failure leaves
 * unmarked to mark it again.
 */
export async function markUpdatesDerived(db: Executor, document: string, seqs: readonly number[]): Promise<void> {
  for (let from = 0; from < seqs.length; from += MARKED_PER_STATEMENT) {
    const chunk = seqs.slice(from, from + MARKED_PER_STATEMENT);
    const [low, high] = boundsOf(chunk);
    // A row's numbers are kept in order, so its first and last bound it: Postgres's `&&` compares every pair.
    await sql`
      with emptied as (delete from underived_updates where document = ${document} and seqs = '{}')
      update underived_updates set seqs = array(select unnest(seqs) except select unnest(${`{${chunk.join(',')}}`}::bigint[]) order by 1)
      where document = ${document} and seqs[1] <= ${high} and seqs[array_upper(seqs, 1)] >= ${low}`.execute(db);
  }
}

/** The sequence numbers of a document's updates whose events are still to be derived, in log order. */
export async function listUnderivedSeqs(db: Executor, document: string): Promise<number[]> {
  const rows = await sql<{ seq: number | string }>`
    select seq from underived_updates, unnest(seqs) as seq where document = ${document} order by seq`.execute(db);
  return rows.rows.map((row) => Number(row.seq));
}

/** The updates of a document whose events are still to be derived, with who wrote each and the run it joined. */
export async function listUnderivedUpdates(db: Executor, document: string): Promise<Array<{ seq: number; principalId: string | null; runId: string | null }>> {
  // Each number's row: the first at or after it that begins at or before it (a run reaches back at most MAX_RUN_SPAN).
  const rows = await sql<{ seq: number | string; principalId: string | null; runId: string | null }>`
    select pending.seq, logged.principal_id, logged.run_id
    from (select unnest(seqs) as seq from underived_updates where document = ${document}) as pending
    join lateral (
      select principal_id, run_id from document_updates
      where document = ${document} and seq >= pending.seq and seq <= pending.seq + ${MAX_RUN_SPAN} and coalesce(first_seq, seq) <= pending.seq
      order by seq limit 1
    ) as logged on true
    order by pending.seq`.execute(db);
  return rows.rows.map((row) => ({ seq: Number(row.seq), principalId: row.principalId, runId: row.runId }));
}
