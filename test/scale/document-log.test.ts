import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { openDatabase, type DatabaseHandle } from '../../src/persistence/database';
import { APPEND_ROWS_PER_STATEMENT, appendUpdates, appendUpdatesPerStatement, listUnderivedUpdates, MAX_RUN_SPAN, markUpdatesDerived, readLoggedUpdates, readLogPage, type LoggedUpdate } from '../../src/persistence/document-log';
import { countTail } from '../../src/persistence/documents';
import { loadHistorySource, logEntryAt, logTailAfter, readLogAfter } from '../../src/persistence/versions';
import { loadAttribution } from '../../src/persistence/attribution';
import { foldSlice, loadStoredDocument, writeSnapshot, writeSyncCopy } from '../../src/persistence/documents';
import { BYTEA_ROWS, readsRawBytes } from '../../src/persistence/pglite-bytes';
import { compact, loadInto } from '../../src/sync/document-store';
import { CompiledQuery, DeleteQueryNode, sql } from 'kysely';
import { statementRecorder } from '../helpers/statements';
import { freshDataStore } from '../helpers/database';
import { listOrphanedUpdates } from '../../src/persistence/instances';
import { appendsNeedLock } from '../../src/persistence/document-log-heads';
import { bytea } from '../../src/persistence/bytea';
import * as underivedBeside from '../../src/persistence/migrations/0160_underived_updates';

/**
 * One writer at a time per document log: two instances (two connection
 * pools on one Postgres; one embedded database on PGlite, which only one
 * process can open) append to the same document and compact it at the same
 * time, and every update is still there to load.
 */
let store: Awaited<ReturnType<typeof freshDataStore>>;
const handles: DatabaseHandle[] = [];

beforeAll(async () => {
  store = await freshDataStore();
  const first = await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir });
  handles.push(first, store.databaseUrl ? await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir }) : first);
});
afterAll(async () => {
  for (const handle of new Set(handles)) await handle.close();
  await store.dispose();
});

/** A writer's updates, each setting one key of a shared map. */
function updatesOf(writer: string, count: number): Uint8Array[] {
  const doc = new Y.Doc();
  const updates: Uint8Array[] = [];
  doc.on('update', (update: Uint8Array) => updates.push(update));
  for (let i = 0; i < count; i++) doc.getMap('m').set(`${writer}-${i}`, i);
  return updates;
}

/** A delete from the update log (not the attribution the fold also rewrites). */
function foldsTheLog(node: DeleteQueryNode): boolean {
  return JSON.stringify(node.from).includes('"name":"document_updates"');
}

describe('document log heads', () => {
  it('loses no update when two instances append and compact one document at once', async () => {
    const document = `test:log-heads:${Date.now()}`;
    const perWriter = 120;
    const write = async (db: DatabaseHandle['db'], writer: string) => {
      const updates = updatesOf(writer, perWriter);
      for (let i = 0; i < updates.length; i += 4) {
        await appendUpdates(
          db,
          updates.slice(i, i + 4).map((update) => ({ document, update, author: null, derived: true })),
        );
        // Compactions interleave with the other instance's appends.
        if (i % 24 === 0) await compact(db, document, new Date());
      }
    };
    await Promise.all([write(handles[0]!.db, 'a'), write(handles[1]!.db, 'b'), write(handles[0]!.db, 'c'), write(handles[1]!.db, 'd')]);
    await compact(handles[1]!.db, document, new Date());

    const loaded = new Y.Doc();
    await loadInto(handles[0]!.db, document, loaded);
    const keys = [...loaded.getMap('m').keys()].sort();
    const expected = ['a', 'b', 'c', 'd'].flatMap((w) => Array.from({ length: perWriter }, (_, i) => `${w}-${i}`)).sort();
    expect(keys.length).toBe(expected.length);
    expect(keys).toEqual(expected);

    // The head names its last writer where appends lock it (on PGlite's one session they need not, and folds never do).
    if (appendsNeedLock(handles[0]!.db)) {
      const head = await handles[0]!.db.selectFrom('documentLogHeads').selectAll().where('document', '=', document).executeTakeFirstOrThrow();
      expect(head.writer).toMatch(/:\d+:[0-9a-f]{8}$/);
    }
  });

  it('keeps a document’s sequence numbers in commit order while another instance appends', async () => {
    const document = `test:log-order:${Date.now()}`;
    const seen: number[][] = [[], []];
    await Promise.all(
      [0, 1].map(async (n) => {
        for (const update of updatesOf(`w${n}`, 60)) {
          const [seq] = await appendUpdates(handles[n]!.db, [{ document, update, author: null, derived: true }]);
          seen[n]!.push(seq!);
        }
      }),
    );
    // Each instance saw its own appends get increasing numbers, and the log holds all of them once.
    for (const seqs of seen) expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    const rows = await handles[0]!.db.selectFrom('documentUpdates').select('seq').where('document', '=', document).orderBy('seq').execute();
    expect(rows.map((r) => Number(r.seq))).toEqual([...seen[0]!, ...seen[1]!].sort((x, y) => x - y));
  });

  it('appends a batch bigger than one statement in order and all or nothing, and marks it derived', async () => {
    const db = handles[0]!.db;
    const document = `test:log-batch:${Date.now()}`;
    const count = 2 * appendUpdatesPerStatement(db) + 44;
    const rows: LoggedUpdate[] = updatesOf('batch', count).map((update) => ({ document, update, author: null, derived: false }));

    // A row the last statement refuses takes every statement before it down with it.
    const refused = `test:log-refused:${Date.now()}`;
    const doomed = [...rows.map((row) => ({ ...row, document: refused })), { document: null as unknown as string, update: rows[0]!.update, author: null, derived: false }];
    await expect(appendUpdates(db, doomed)).rejects.toThrow();
    expect(await db.selectFrom('documentUpdates').select('seq').where('document', '=', refused).execute()).toEqual([]);

    const seqs = await appendUpdates(db, rows);
    expect(seqs).toHaveLength(count);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    const loaded = new Y.Doc();
    await loadInto(db, document, loaded);
    expect([...loaded.getMap('m').keys()].sort()).toEqual(Array.from({ length: count }, (_, i) => `batch-${i}`).sort());

    await markUpdatesDerived(db, document, seqs);
    expect(await listUnderivedUpdates(db, document)).toEqual([]);
  });

  /**
   * An append sends each column of its rows as one array literal (session
   * 16): values that an array literal must quote or escape, and null, come
   * back as they went in, row by row, with the statement's one `created_at`.
   */
  it('keeps documents, authors and runs that an array literal must quote, each on its own row', async () => {
    const db = handles[0]!.db;
    const stamp = Date.now();
    const odd = ['a "quoted", {braced} name', 'back\\slash\\', 'NULL', '', ' spaced ', 'ü,é'];
    const [one, two] = updatesOf('odd', 2);
    const rows: LoggedUpdate[] = odd.flatMap((name, i) => [
      { document: `test:log-odd:${stamp}:${name}`, update: one!, author: { principalType: 'user', id: name }, runId: name, derived: false, writer: i },
      { document: `test:log-odd:${stamp}:${name}`, update: two!, author: null, runId: null, derived: false, writer: null },
    ]);
    const seqs = await appendUpdates(db, rows);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    const stored = await sql<{ seq: string; document: string; update: Uint8Array; principalType: string | null; principalId: string | null; runId: string | null; writer: number | null; createdAt: Date }>`
      select seq::text, document, update, principal_type, principal_id, run_id, writer, created_at from document_updates where document like ${`test:log-odd:${stamp}:%`} order by seq`.execute(db);
    expect(stored.rows.map((row) => ({ ...row, seq: Number(row.seq), update: [...row.update], createdAt: undefined }))).toEqual(
      rows.map((row, i) => ({
        seq: seqs[i],
        document: row.document,
        update: [...row.update],
        principalType: row.author?.principalType ?? null,
        principalId: row.author?.id ?? null,
        runId: row.runId ?? null,
        writer: row.writer ?? null,
        createdAt: undefined,
      })),
    );
    expect(new Set(stored.rows.map((row) => row.createdAt.getTime())).size).toBe(1);
    for (const name of odd) expect((await listUnderivedUpdates(db, `test:log-odd:${stamp}:${name}`)).map((u) => u.principalId)).toEqual([name, null]);
  });

  /**
   * Issue 38: a sync client's update was appended underived and rewritten
   * when its events committed (every typed update written twice, a new heap
   * tuple and index entries each). What is still to derive is now kept
   * beside the log: the log's rows stay the versions their append wrote,
   * while what is underived still reads the same, a burst at a time.
   */
  it('logs a statement\'s updates of one author, writer and run as one row on the embedded database, each read back with its own number, bytes and author, and folded only whole', async () => {
    const db = handles[0]!.db;
    const document = `test:log-runs:${Date.now()}`;
    const ada = { principalType: 'user' as const, id: 'usr_ada' };
    const bob = { principalType: 'agent' as const, id: 'agt_bob' };
    const updates = updatesOf('runs', 10);
    // Ada's first four, Bob's next three, Ada's last three: three runs.
    const authors = [ada, ada, ada, ada, bob, bob, bob, ada, ada, ada];
    const seqs = await appendUpdates(db, updates.map((update, i) => ({ document, update, author: authors[i]!, derived: false, writer: 1, runId: i < 7 ? null : 'run_1' })));
    expect(seqs).toHaveLength(10);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);

    const rows = (await sql<{ seq: string; first: string | null }>`select seq::text, first_seq::text as first from document_updates where document = ${document} order by seq`.execute(db)).rows;
    if (appendsNeedLock(db)) {
      // Postgres: other sessions draw numbers meanwhile, so every row is one update.
      expect(rows.map((row) => row.first)).toEqual(Array(10).fill(null));
    } else {
      expect(rows.map((row) => [Number(row.first), Number(row.seq)])).toEqual([
        [seqs[0], seqs[3]],
        [seqs[4], seqs[6]],
        [seqs[7], seqs[9]],
      ]);
      // Consecutive: a run's numbers are its own.
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => seqs[0]! + i));
    }

    // Every reader sees one update a number, with its bytes, author and run.
    const read = await readLoggedUpdates(db, document);
    expect(read.map((u) => u.seq)).toEqual(seqs);
    expect(read.map((u) => [...u.update])).toEqual(updates.map((u) => [...u]));
    expect(read.map((u) => u.author?.id)).toEqual(authors.map((a) => a.id));
    expect(read.map((u) => u.runId)).toEqual([...Array(7).fill(null), 'run_1', 'run_1', 'run_1']);
    expect((await listUnderivedUpdates(db, document)).map((u) => [u.seq, u.principalId, u.runId])).toEqual(seqs.map((seq, i) => [seq, authors[i]!.id, i < 7 ? null : 'run_1']));
    expect((await loadStoredDocument(db, document)).updates.map((u) => u.seq)).toEqual(seqs);
    expect((await readLogAfter(db, document, seqs[1]!, 3)).map((u) => u.seq)).toEqual(seqs.slice(2, 5));
    expect((await readLogAfter(db, document, seqs[1]!, 100, seqs[5]!)).map((u) => u.seq)).toEqual(seqs.slice(2, 6));
    expect((await loadHistorySource(db, document, seqs[5]!)).updates.map((u) => [u.seq, u.attributedTo])).toEqual(seqs.slice(0, 6).map((seq, i) => [seq, `${authors[i]!.principalType}:${authors[i]!.id}`]));
    expect(await logEntryAt(db, document, seqs[5]!)).toMatchObject({ seq: seqs[5], author: bob });
    expect(await logEntryAt(db, document, seqs[9]! + 1)).toBeNull();
    expect(await logTailAfter(db, document, seqs[1]!, seqs[5]!)).toMatchObject({ rows: 4, head: seqs[5] });
    expect(await countTail(db, document, seqs[2]!)).toBe(7);
    await markUpdatesDerived(db, document, seqs);

    // A fold up to a number inside Bob's run deletes Ada's first run and keeps Bob's whole; every read starts after the fold.
    const upto = new Y.Doc();
    for (const update of updates.slice(0, 6)) Y.applyUpdate(upto, update);
    expect(await writeSnapshot(db, document, Y.encodeStateAsUpdateV2(upto), 0, seqs[5]!, new Date())).toBe(appendsNeedLock(db) ? 6 : 4);
    const stored = await loadStoredDocument(db, document);
    expect(stored.snapshot?.uptoSeq).toBe(seqs[5]);
    expect(stored.updates.map((u) => u.seq)).toEqual(seqs.slice(6));
    expect(await countTail(db, document, seqs[5]!)).toBe(4);
    const loaded = new Y.Doc();
    await loadInto(db, document, loaded);
    expect([...loaded.getMap('m').keys()].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `runs-${i}`).sort());
    // Who made each item, Bob's run being both folded and still logged.
    const attribution = await loadAttribution(db, document);
    const writerOf = (i: number) => {
      const item = (loaded.getMap('m') as Y.Map<number>)._map.get(`runs-${i}`)!;
      return attribution.ranges.lookup(item.id.client, item.id.clock).key;
    };
    expect(Array.from({ length: 10 }, (_, i) => writerOf(i))).toEqual(authors.map((a) => `${a.principalType}:${a.id}`));

    // The next fold, past the run, deletes it.
    expect(await writeSnapshot(db, document, Y.encodeStateAsUpdateV2(loaded), seqs[5]!, seqs[9]!, new Date())).toBe(appendsNeedLock(db) ? 4 : 6);
    expect(await readLoggedUpdates(db, document)).toEqual([]);
  });

  it('reads the log a page of at least as many updates as asked, and at most one row more, whether its rows are runs or single updates', async () => {
    const db = handles[0]!.db;
    const document = `test:log-pages:${Date.now()}`;
    const perStatement = appendUpdatesPerStatement(db);
    const updates = updatesOf('pages', 3 * perStatement);
    const seqs: number[] = [];
    for (let i = 0; i < updates.length; i += perStatement) {
      seqs.push(...(await appendUpdates(db, updates.slice(i, i + perStatement).map((update) => ({ document, update, author: null, derived: true })))));
    }
    for (const [after, limit] of [[0, 10], [seqs[5]!, 10], [seqs[perStatement - 3]!, 10], [0, perStatement + 1]] as const) {
      const page = await readLogPage(db, document, after, limit);
      const from = seqs.indexOf(page[0]!.seq);
      expect(page[0]!.seq).toBeGreaterThan(after);
      expect(page.map((u) => u.seq)).toEqual(seqs.slice(from, from + page.length));
      expect(page.length).toBeGreaterThanOrEqual(limit);
      expect(page.length).toBeLessThan(limit + perStatement);
    }
    // Fewer than asked: the log's last page.
    expect((await readLogPage(db, document, seqs[seqs.length - 4]!, 10)).map((u) => u.seq)).toEqual(seqs.slice(-3));
    expect((await readLogPage(db, document, seqs[2]!, 10, seqs[6]!)).map((u) => u.seq)).toEqual(seqs.slice(3, 7));
  });

  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))('reads runs of 1,024 updates that an earlier version wrote, now that a statement holds fewer', async () => {
    const db = handles[0]!.db;
    const document = `test:log-long-runs:${Date.now()}`;
    const perStatement = appendUpdatesPerStatement(db);
    expect(perStatement).toBeLessThan(MAX_RUN_SPAN + 1);
    const updates = updatesOf('long-runs', MAX_RUN_SPAN + 1);
    const seqs: number[] = [];
    for (let i = 0; i < updates.length; i += perStatement) {
      seqs.push(...(await appendUpdates(db, updates.slice(i, i + perStatement).map((update) => ({ document, update, author: null, derived: true })))));
    }
    expect(seqs).toEqual(Array.from({ length: updates.length }, (_, i) => seqs[0]! + i));
    // What the earlier version wrote: the whole batch as one run (a run's framed updates concatenate).
    await sql`update document_updates set update = (select string_agg(update, ''::bytea order by seq) from document_updates where document = ${document}), first_seq = ${seqs[0]!}
      where document = ${document} and seq = ${seqs.at(-1)!}`.execute(db);
    await sql`delete from document_updates where document = ${document} and seq < ${seqs.at(-1)!}`.execute(db);
    expect((await sql<{ n: number }>`select count(*)::int as n from document_updates where document = ${document}`.execute(db)).rows[0]!.n).toBe(1);

    expect((await readLoggedUpdates(db, document)).map((u) => [...u.update])).toEqual(updates.map((u) => [...u]));
    expect(await logEntryAt(db, document, seqs[0]!)).toMatchObject({ seq: seqs[0] });
    expect((await readLogAfter(db, document, seqs[0]!, 3)).map((u) => u.seq)).toEqual(seqs.slice(1, 4));
    expect((await loadHistorySource(db, document, seqs[2]!)).updates.map((u) => u.seq)).toEqual(seqs.slice(0, 3));
    expect(await countTail(db, document, seqs[0]!)).toBe(MAX_RUN_SPAN);
    expect((await loadStoredDocument(db, document)).updates).toHaveLength(MAX_RUN_SPAN + 1);
  });

  it('writes a client update to the log once: marking it derived rewrites no row of the log', async () => {
    const db = handles[0]!.db;
    const document = `test:log-once:${Date.now()}`;
    const count = appendUpdatesPerStatement(db) + 72;
    const seqs = await appendUpdates(db, updatesOf('once', count).map((update) => ({ document, update, author: null, derived: false, writer: 1 })));
    const versions = async () =>
      (await sql<{ seq: string; version: string }>`select seq::text, ctid::text || '/' || xmin::text as version from document_updates where document = ${document} order by seq`.execute(db)).rows;
    const appended = await versions();
    expect((await readLoggedUpdates(db, document)).map((u) => u.seq)).toEqual(seqs);
    expect((await listUnderivedUpdates(db, document)).map((u) => u.seq)).toEqual(seqs);

    // A burst's commit marks part of the log, crossing an append statement's end; then the rest.
    const burst = seqs.slice(50, appendUpdatesPerStatement(db) + 20);
    await markUpdatesDerived(db, document, burst);
    const marked = new Set(burst);
    expect((await listUnderivedUpdates(db, document)).map((u) => u.seq)).toEqual(seqs.filter((seq) => !marked.has(seq)));
    expect((await loadStoredDocument(db, document)).updates.map((u) => u.derived)).toEqual(seqs.map((seq) => marked.has(seq)));
    await markUpdatesDerived(db, document, seqs);
    expect(await listUnderivedUpdates(db, document)).toEqual([]);
    expect((await loadStoredDocument(db, document)).updates.every((u) => u.derived)).toBe(true);

    expect(await versions()).toEqual(appended);
  });

  it('keeps what a crash left underived through the upgrade that moves it beside the log', async () => {
    const upgrade = await freshDataStore();
    const handle = await openDatabase({ databaseUrl: upgrade.databaseUrl, dataDir: upgrade.dataDir });
    try {
      const db = handle.db;
      const document = `test:log-upgrade:${Date.now()}`;
      await underivedBeside.down(db);
      // The old schema: client updates logged underived, the first two by a writer that died, then one derived.
      const [update] = updatesOf('upgrade', 1);
      for (const [derived, writer] of [[false, 7], [false, 7], [true, 7], [false, null]] as const) {
        await sql`insert into document_updates (document, update, derived, writer) values (${document}, ${bytea(update!)}, ${derived}, ${writer})`.execute(db);
      }
      const seqs = (await sql<{ seq: string }>`select seq::text from document_updates where document = ${document} order by seq`.execute(db)).rows.map((r) => Number(r.seq));
      await underivedBeside.up(db);

      expect((await listUnderivedUpdates(db, document)).map((u) => u.seq)).toEqual([seqs[0], seqs[1], seqs[3]]);
      expect((await loadStoredDocument(db, document)).updates.map((u) => u.derived)).toEqual([false, false, true, false]);
      expect(await listOrphanedUpdates(db, [1], { document })).toEqual(new Map([[document, [seqs[0], seqs[1], seqs[3]]]]));
      await markUpdatesDerived(db, document, [seqs[0]!, seqs[3]!]);
      expect(await listOrphanedUpdates(db, [7], { document })).toEqual(new Map());
      expect(await listOrphanedUpdates(db, [1], { document })).toEqual(new Map([[document, [seqs[1]]]]));
    } finally {
      await handle.close();
      await upgrade.dispose();
    }
  });

  /**
   * A typist's new document is folded (5,000 updates) while the table's
   * statistics still know only older documents. Folding it ran a nested loop
   * that read the slice's subquery again for every update: quadratic work,
   * 6-9 s of the embedded database holding the event loop (docs/PERFORMANCE.md,
   * "PGlite's slow mode beside a typist"). The fold's reads stay linear in
   * the updates it folds, whatever the statistics say.
   */
  it('folds a document newer than the statistics with reads linear in its log', async () => {
    const db = handles[0]!.db;
    const count = 1_200;
    const log = async (document: string) => {
      const updates = updatesOf(document, count);
      for (let i = 0; i < updates.length; i += APPEND_ROWS_PER_STATEMENT) {
        // Two authors in turn: no two neighbours share a row (on the embedded database a statement's updates of one author are one row, a run).
        await appendUpdates(db, updates.slice(i, i + APPEND_ROWS_PER_STATEMENT).map((update, j) => ({ document, update, author: j % 2 === 0 ? null : { principalType: 'user' as const, id: 'usr_fold' }, derived: true })));
      }
    };
    await log(`test:fold-known:${Date.now()}`);
    await sql`analyze document_updates`.execute(db);
    const fresh = `test:fold-fresh:${Date.now()}`;
    await log(fresh);
    const last = await db.selectFrom('documentUpdates').select((eb) => eb.fn.max('seq').as('seq')).where('document', '=', fresh).executeTakeFirstOrThrow();

    const fold = foldSlice(db, fresh, Number(last.seq)).compile();
    const explained = await db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>(
      CompiledQuery.raw(`explain (analyze, buffers, format json) ${fold.sql}`, [...fold.parameters]),
    );
    const plan = explained.rows[0]!['QUERY PLAN'][0]!.Plan;
    const left = await db.selectFrom('documentUpdates').select('seq').where('document', '=', fresh).execute();
    const folded = count - left.length;
    expect(folded).toBeGreaterThan(0);
    // About one buffer read per update folded; the nested loop read 22 per update at this size (26,847), and more the longer the log.
    expect(plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!).toBeLessThan(5 * folded);
  });

  /**
   * On the embedded database a statement holds the serving thread while it
   * runs: a fold deleting 2,000 updates a statement took up to 32 ms of it,
   * on top of the turn's budget (docs/PERFORMANCE.md, "PGlite's pauses over
   * 50 ms under the trace"). The fold removes a long log in statements of at
   * most 500 updates, all in its one transaction, and leaves nothing it
   * folded behind.
   */
  it('folds a long log in statements of at most 500 rows', async () => {
    const db = handles[0]!.db;
    const document = `test:fold-slices:${Date.now()}`;
    const count = 1_300;
    const updates = updatesOf('fold', count);
    for (let i = 0; i < updates.length; i += APPEND_ROWS_PER_STATEMENT) {
      // Two authors in turn: no two neighbours share a row (on the embedded database a statement's updates of one author are one row, a run).
      await appendUpdates(db, updates.slice(i, i + APPEND_ROWS_PER_STATEMENT).map((update, j) => ({ document, update, author: j % 2 === 0 ? null : { principalType: 'user' as const, id: 'usr_fold' }, derived: true })));
    }
    const state = new Y.Doc();
    for (const update of updates) Y.applyUpdate(state, update);
    const last = await db.selectFrom('documentUpdates').select((eb) => eb.fn.max('seq').as('seq')).where('document', '=', document).executeTakeFirstOrThrow();

    // Rows each delete statement of the fold removed (it returns each row's count of updates).
    const deletes: number[] = [];
    const recording = statementRecorder((node, result) => {
      if (DeleteQueryNode.is(node) && foldsTheLog(node)) deletes.push(result.rows.length);
    });
    const folded = await writeSnapshot(db.withPlugin(recording), document, Y.encodeStateAsUpdateV2(state), 0, Number(last.seq), new Date());

    expect(folded).toBe(count);
    expect(deletes.reduce((sum, n) => sum + n, 0)).toBe(count);
    expect(Math.max(...deletes)).toBeLessThanOrEqual(500);
    expect(deletes.length).toBe(Math.ceil(count / 500));
    expect(await db.selectFrom('documentUpdates').select('seq').where('document', '=', document).execute()).toEqual([]);
    const loaded = new Y.Doc();
    await loadInto(db, document, loaded);
    expect([...loaded.getMap('m').keys()].sort()).toEqual(Array.from({ length: count }, (_, i) => `fold-${i}`).sort());
  });
});

/**
 * The stored state is read as raw bytes (src/persistence/pglite-bytes.ts on
 * PGlite, in the serving thread and in the database's own; node-postgres's
 * `bytea` on Postgres): it must come back byte for byte, every byte value,
 * over a megabyte, as the V2 state and as its V1 copy, inside the load's
 * transaction.
 */
describe('the stored state read as bytes', () => {
  /** Bytes with every value (0, the backslash, high bytes) and little to compress, so the database stores them out of line. */
  function bytesOf(length: number, seed: number): Uint8Array {
    const out = new Uint8Array(length);
    let x = seed >>> 0 || 1;
    for (let i = 0; i < length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out[i] = i < 256 ? i : x & 0xff;
    }
    return out;
  }

  const readsBack = async (db: DatabaseHandle['db']) => {
    // PGlite takes the raw path, in the load's transaction too; Postgres reads base64.
    const embedded = !store.databaseUrl;
    expect(readsRawBytes(db)).toBe(embedded);
    expect(await db.transaction().execute(async (tx) => readsRawBytes(tx))).toBe(embedded);
    const document = `test:bytes:${Date.now()}:${Math.random()}`;
    const state = bytesOf(1_500_000, 7);
    await appendUpdates(db, [{ document, update: Uint8Array.of(0, 0), author: null, derived: true }]);
    const seq = Number((await db.selectFrom('documentUpdates').select('seq').where('document', '=', document).executeTakeFirstOrThrow()).seq);
    expect(await writeSnapshot(db, document, state, 0, seq, new Date())).toBe(1);
    const v2 = await loadStoredDocument(db, document);
    expect(v2.snapshot?.encoding).toBe('v2');
    expect(v2.snapshot?.uptoSeq).toBe(seq);
    expect(Buffer.compare(Buffer.from(v2.snapshot!.state), Buffer.from(state))).toBe(0);

    const copy = bytesOf(2_300_000, 11);
    expect(await writeSyncCopy(db, document, seq, copy)).toBe(true);
    const v1 = await loadStoredDocument(db, document);
    expect(v1.snapshot?.encoding).toBe('v1');
    expect(v1.snapshot?.state.byteLength).toBe(copy.byteLength);
    expect(Buffer.compare(Buffer.from(v1.snapshot!.state), Buffer.from(copy))).toBe(0);
    // An empty value and no snapshot at all.
    expect(await writeSyncCopy(db, document, seq, new Uint8Array(0))).toBe(true);
    expect((await loadStoredDocument(db, document)).snapshot?.state.byteLength).toBe(0);
    expect((await loadStoredDocument(db, `${document}:none`)).snapshot).toBeNull();
  };

  it('loads a snapshot over a megabyte byte for byte, its V1 copy too', async () => {
    await readsBack(handles[0]!.db);
  });

  it.skipIf(Boolean(store?.databaseUrl) || Boolean(process.env.TEST_DATABASE_URL))('loads it byte for byte from the embedded database in its own thread, and passes on its refusals', async () => {
    const own = await freshDataStore();
    const threaded = await openDatabase({ dataDir: own.dataDir, pgliteThread: true });
    try {
      await readsBack(threaded.db);
      await expect(sql`${sql.raw(BYTEA_ROWS)} select 'x'::bytea as a, 1 as b`.execute(threaded.db)).rejects.toThrow(/not bytea/);
      await expect(sql`${sql.raw(BYTEA_ROWS)} select * from no_such_table`.execute(threaded.db)).rejects.toMatchObject({ code: '42P01' });
      // The session is still usable after a refusal.
      expect((await sql<{ a: Uint8Array }>`${sql.raw(BYTEA_ROWS)} select '\\x00ff'::bytea as a`.execute(threaded.db)).rows[0]!.a).toEqual(Uint8Array.of(0, 255));
    } finally {
      await threaded.close();
      await own.dispose();
    }
  });
});
