import type { CompiledQuery } from 'kysely';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/persistence/database';
import { markSingleSession } from '../../src/persistence/document-log-heads';
import { ChangeBatches, LOG_AHEAD_MESSAGES, UpdateLog } from '../../src/sync/group-commit';

/** A Hocuspocus wire message: document name, sync message, update (or an awareness message). */
function message(document: string, kind: 'update' | 'step2' | 'awareness', payload: Uint8Array = new Uint8Array([1, 2, 3])): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarString(encoder, document);
  if (kind === 'awareness') {
    encoding.writeVarUint(encoder, 1);
    encoding.writeVarUint8Array(encoder, payload);
  } else {
    encoding.writeVarUint(encoder, 0);
    encoding.writeVarUint(encoder, kind === 'update' ? 2 : 1);
    encoding.writeVarUint8Array(encoder, payload);
  }
  return encoding.toUint8Array(encoder);
}

/** The elements of a one-dimensional array literal as the append writes them (quoted, or bare base64). */
function elementsOf(literal: string): string[] {
  const elements: string[] = [];
  let i = 1;
  while (i < literal.length - 1) {
    let element = '';
    if (literal[i] === '"') {
      for (i++; literal[i] !== '"'; i++) element += literal[i] === '\\' ? literal[++i] : literal[i];
      i++;
    } else {
      while (literal[i] !== ',' && literal[i] !== '}') element += literal[i++];
    }
    elements.push(element);
    i++; // the comma
  }
  return elements;
}

/**
 * The updates of an append statement (src/persistence/document-log.ts): one
 * array a column, the updates as base64 text; on one session a row is a run,
 * its updates framed and its length in the seventh array.
 */
function rowsOf(statement: CompiledQuery): Array<{ document: string; update: Uint8Array }> {
  const documents = elementsOf(statement.parameters[0] as string);
  const updates = elementsOf(statement.parameters[1] as string);
  const lengths = statement.parameters.length === 7 ? elementsOf(statement.parameters[6] as string).map(Number) : null;
  return documents.flatMap((document, i) => {
    const bytes = new Uint8Array(Buffer.from(updates[i]!, 'base64'));
    if (!lengths || lengths[i] === 1) return [{ document, update: bytes }];
    const decoder = decoding.createDecoder(bytes);
    return Array.from({ length: lengths[i]! }, () => ({ document, update: decoding.readVarUint8Array(decoder) }));
  });
}

/** A database that records each INSERT into the log as one commit, and can hold or fail commits. */
function fakeDb() {
  const commits: Array<Array<{ document: string; update: Uint8Array }>> = [];
  let hold: Promise<void> | null = null;
  let release = () => {};
  let failNext = false;
  let seq = 0;
  let open: Array<{ document: string; update: Uint8Array }> | null = null;
  const db = {
    executeQuery: async (statement: CompiledQuery) => {
      if (hold) await hold;
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      const rows = rowsOf(statement);
      if (open) open.push(...rows);
      else commits.push(rows);
      return { rows: [{ seqs: rows.map(() => ++seq).join(','), createdAt: new Date() }] };
    },
    // A transaction's statements are one commit.
    transaction: () => ({
      execute: async (fn: (tx: unknown) => Promise<unknown>) => {
        open = [];
        try {
          return await fn(Object.assign(Object.create(db), { isTransaction: true }));
        } finally {
          commits.push(open);
          open = null;
        }
      },
    }),
    getExecutor: () => executor,
  };
  const executor = { adapter: {} };
  // One session, like embedded PGlite: appends need no log-head lock (document-log-heads.ts).
  markSingleSession(db as unknown as Db);
  return {
    db: db as unknown as Db,
    commits,
    holdCommits() {
      hold = new Promise<void>((resolve) => (release = resolve));
    },
    releaseCommits() {
      hold = null;
      release();
    },
    failNextCommit() {
      failNext = true;
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('UpdateLog (group commit of the update log)', () => {
  it('puts appends that arrive during a commit into one next commit, and resolves each only after its own commit', async () => {
    const fake = fakeDb();
    const logged: string[] = [];
    const log = new UpdateLog(fake.db, 1, (document) => logged.push(document));
    fake.holdCommits();
    const first = log.append('a', new Uint8Array([1]), null);
    let firstDone = false;
    void first.then(() => (firstDone = true));
    await tick();
    const later = [log.append('a', new Uint8Array([2]), null), log.append('b', new Uint8Array([3]), null), log.append('a', new Uint8Array([4]), null)];
    await tick();
    expect(firstDone).toBe(false); // its commit is still in flight
    fake.releaseCommits();
    await Promise.all([first, ...later]);
    expect(fake.commits.map((rows) => rows.map((r) => [r.document, r.update[0]]))).toEqual([
      [['a', 1]],
      [
        ['a', 2],
        ['b', 3],
        ['a', 4],
      ],
    ]);
    expect(logged).toEqual(['a', 'a', 'b', 'a']);
  });

  it("logs the updates queued behind a connection's message in the same commit, in order; their turn writes nothing more", async () => {
    const fake = fakeDb();
    const log = new UpdateLog(fake.db, 1, () => {});
    const m0 = message('ws/doc/1', 'update', new Uint8Array([10]));
    const m1 = message('ws/doc/1', 'awareness');
    const m2 = message('ws/doc/1', 'step2', new Uint8Array([12]));
    const m3 = message('ws/doc/1', 'update', new Uint8Array([13]));
    const connection = { messageQueue: [m0, m1, m2, m3] };
    await log.logMessage(connection, 'ws/doc/1', m0, null);
    expect(fake.commits).toHaveLength(1);
    expect(fake.commits[0]!.map((r) => r.update[0])).toEqual([10, 12, 13]);

    // Hocuspocus handles the rest in order: nothing is written again.
    connection.messageQueue.shift();
    for (const next of [m1, m2, m3]) {
      await log.logMessage(connection, 'ws/doc/1', next, null);
      connection.messageQueue.shift();
    }
    expect(fake.commits).toHaveLength(1);
  });

  it(`logs at most ${LOG_AHEAD_MESSAGES} waiting messages ahead in one pass; the first not logged ahead looks ahead again at its turn, and every update is logged once, in order`, async () => {
    const fake = fakeDb();
    const log = new UpdateLog(fake.db, 1, () => {});
    const total = LOG_AHEAD_MESSAGES * 2 + 10;
    const messages = Array.from({ length: total }, (_, i) => message('d', 'update', new Uint8Array([1, i & 0xff, i >> 8])));
    const connection = { messageQueue: [...messages] };
    await log.logMessage(connection, 'd', messages[0]!, null);
    expect(fake.commits).toHaveLength(1);
    expect(fake.commits[0]!).toHaveLength(LOG_AHEAD_MESSAGES + 1);
    connection.messageQueue.shift();
    for (const next of messages.slice(1)) {
      await log.logMessage(connection, 'd', next, null);
      connection.messageQueue.shift();
    }
    expect(fake.commits.map((rows) => rows.length)).toEqual([LOG_AHEAD_MESSAGES + 1, LOG_AHEAD_MESSAGES + 1, total - 2 * (LOG_AHEAD_MESSAGES + 1)]);
    expect(fake.commits.flat().map((row) => row.update[1]! + row.update[2]! * 256)).toEqual(messages.map((_, i) => i));
  });

  it('a failed commit rejects every append in it, and the next commit works', async () => {
    const fake = fakeDb();
    const log = new UpdateLog(fake.db, 1, () => {});
    const m0 = message('d', 'update', new Uint8Array([1]));
    const m1 = message('d', 'update', new Uint8Array([2]));
    const connection = { messageQueue: [m0, m1] };
    fake.failNextCommit();
    await expect(log.logMessage(connection, 'd', m0, null)).rejects.toThrow('disk full');
    // The message logged ahead reports the same failure on its turn (Hocuspocus then closes the connection).
    await expect(log.logMessage(connection, 'd', m1, null)).rejects.toThrow('disk full');
    await log.append('d', new Uint8Array([3]), null);
    expect(fake.commits.map((rows) => rows.map((r) => r.update[0]))).toEqual([[3]]);
  });

  it('ignores messages that carry no update', async () => {
    const fake = fakeDb();
    const log = new UpdateLog(fake.db, 1, () => {});
    await log.logMessage({ messageQueue: [] }, 'd', message('d', 'awareness'), null);
    expect(fake.commits).toEqual([]);
  });
});

describe('ChangeBatches (one events transaction for many changes)', () => {
  type Change = { id: number; urgent?: boolean };

  function setup(lingerMs: number) {
    let queue: Promise<unknown> = Promise.resolve();
    const persisted: number[][] = [];
    let slow: Promise<void> | null = null;
    const batches = new ChangeBatches<Change>(
      (_name, task) => {
        const run = queue.then(task);
        queue = run.catch(() => {});
        return run.then(() => {});
      },
      async (_name, changes) => {
        persisted.push(changes.map((c) => c.id));
        if (slow) await slow;
      },
      { urgent: (c) => Boolean(c.urgent), lingerMs, maxBatch: 5 },
    );
    return {
      batches,
      persisted,
      idle: () => queue,
      slowDown: () => {
        let release!: () => void;
        slow = new Promise<void>((resolve) => (release = resolve));
        return () => {
          slow = null;
          release();
        };
      },
    };
  }

  it("lets sync clients' changes linger and share one batch, in order", async () => {
    const { batches, persisted, idle } = setup(30);
    for (let id = 1; id <= 3; id++) batches.push('doc', { id });
    await new Promise((resolve) => setTimeout(resolve, 5));
    batches.push('doc', { id: 4 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    await idle();
    expect(persisted).toEqual([[1, 2, 3, 4]]);
  });

  it('a server-made change ends the wait at once; a full batch starts the next one', async () => {
    const { batches, persisted, idle } = setup(10_000);
    const started = Date.now();
    batches.push('doc', { id: 1 });
    batches.push('doc', { id: 2, urgent: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await idle();
    expect(persisted).toEqual([[1, 2]]);
    expect(Date.now() - started).toBeLessThan(5_000);

    for (let id = 3; id <= 8; id++) batches.push('doc', { id, urgent: true });
    await idle();
    expect(persisted.slice(1)).toEqual([
      [3, 4, 5, 6, 7],
      [8],
    ]);
  });

  it('changes made within one turn of the event loop share a commit, with no linger', async () => {
    const { batches, persisted, idle } = setup(0);
    // Another request, already waiting in this turn of the event loop, makes its change after the first one's.
    const second = new Promise<void>((resolve) => setImmediate(() => resolve(batches.push('doc', { id: 2, urgent: true }))));
    batches.push('doc', { id: 1, urgent: true });
    await second;
    await idle();
    expect(persisted).toEqual([[1, 2]]);
  });

  it('changes that arrive while a batch is being persisted go to the next batch', async () => {
    const { batches, persisted, idle, slowDown } = setup(0);
    const release = slowDown();
    batches.push('doc', { id: 1 });
    await tick(); // a batch waits one turn of the event loop before it is persisted...
    await tick(); // ...and is being persisted after it
    expect(persisted).toEqual([[1]]);
    batches.push('doc', { id: 2 });
    batches.push('doc', { id: 3 });
    release();
    await idle();
    await idle();
    expect(persisted).toEqual([[1], [2, 3]]);
  });
});
