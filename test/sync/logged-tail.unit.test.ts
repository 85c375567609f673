import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/persistence/database';
import { historyUpdateOf } from '../../src/persistence/versions';
import { packUpdates } from '../../src/sync/history-thread';
import { forgetLoggedThrough, loggedAfter, recordLogged } from '../../src/sync/logged-tail';

/**
 * The updates held for the history pass (src/sync/logged-tail.ts) and how a
 * pass's tail is packed for the history thread (src/sync/history-thread.ts):
 * which updates a pass after a given position takes, and what a fold drops.
 * Written so that V8 does not fall out of their compiled loops at every pass
 * (PERFORMANCE.md "h17-deopt"); these pin what they return.
 */

const at = new Date('2026-12-01T10:00:00Z');
const typist = { principalType: 'user' as const, id: 'us_1' };
const update = (seq: number) => historyUpdateOf(seq, at, new Uint8Array([seq, seq + 1]), seq % 2 === 0 ? typist : null);
const seqsOf = (updates: ReadonlyArray<{ seq: number }>) => updates.map((u) => u.seq);

describe('held updates', () => {
  it('a pass after a position takes the held updates after it, in seq order, also when commits were recorded out of order', () => {
    const db = {} as Db;
    recordLogged(db, 'd', [1, 2, 3].map(update));
    recordLogged(db, 'd', [6, 7].map(update));
    recordLogged(db, 'd', [4, 5].map(update)); // a later commit's callback ran first
    recordLogged(db, 'd', [5].map(update)); // already held: not twice
    expect(seqsOf(loggedAfter(db, 'd', 0))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(seqsOf(loggedAfter(db, 'd', 3))).toEqual([4, 5, 6, 7]);
    expect(seqsOf(loggedAfter(db, 'd', 6))).toEqual([7]);
    expect(loggedAfter(db, 'd', 7)).toEqual([]);
    expect(loggedAfter(db, 'other', 0)).toEqual([]);
  });

  it('a fold drops what it took and keeps the rest; a fold short of everything held drops nothing', () => {
    const db = {} as Db;
    recordLogged(db, 'd', [3, 4, 5, 6].map(update));
    forgetLoggedThrough(db, 'd', 2);
    expect(seqsOf(loggedAfter(db, 'd', 0))).toEqual([3, 4, 5, 6]);
    forgetLoggedThrough(db, 'd', 4);
    expect(seqsOf(loggedAfter(db, 'd', 0))).toEqual([5, 6]);
    forgetLoggedThrough(db, 'd', 6);
    expect(loggedAfter(db, 'd', 0)).toEqual([]);
  });
});

describe('a tail packed for the history thread', () => {
  it('holds each update in order in one buffer, with where each ends, its seq and its author', () => {
    const packed = packUpdates([3, 4, 5].map(update));
    expect([...packed.bytes]).toEqual([3, 4, 4, 5, 5, 6]);
    expect(packed.ends).toEqual([2, 4, 6]);
    expect(packed.seqs).toEqual([3, 4, 5]);
    expect(packed.authors).toEqual([null, typist, null]);
    expect(packUpdates([])).toEqual({ bytes: new Uint8Array(0), ends: [], seqs: [], authors: [] });
  });
});
