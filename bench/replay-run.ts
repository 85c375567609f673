/**
 * The history thread's replay of the typing trace's updates, in CPU time:
 * one Yjs transaction an update (what it did before session 18) against
 * runs of updates between version points (src/sync/replay-run.ts), both
 * reading each update's ranges as the pass does for compaction's claims.
 * Counts the edits each way (they must agree).
 *
 *   npx tsx bench/replay-run.ts [edits=60000] [run=1000]
 */
import * as Y from 'yjs';
import { updateRanges } from '../src/model/attribution';
import { replayRun, type Unpacked } from '../src/sync/replay-run';
import { loadTrace } from './doc';

const edits = Number(process.argv[2] ?? 60000);
const every = Number(process.argv[3] ?? 1000);
const trace = loadTrace();
const typist = new Y.Doc();
const updates: Unpacked[] = [];
typist.on('update', (update: Uint8Array) => updates.push({ seq: updates.length + 1, author: { principalType: 'user', id: 'typist' } as Unpacked['author'], update }));
const paragraph = new Y.XmlElement('paragraph');
const text = new Y.XmlText();
paragraph.insert(0, [text]);
typist.getXmlFragment('body').insert(0, [paragraph]);
let typed = 0;
for (let i = 0; i < trace.txns.length && typed < edits; i++) {
  for (const [pos, del, ins] of trace.txns[i]!.patches) {
    typist.transact(() => {
      if (del) text.delete(pos, del);
      if (ins) text.insert(pos, ins);
    });
    typed++;
  }
}
const origin = { source: 'bench-replay' };
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

function oneTransactionAnUpdate(): number {
  const doc = new Y.Doc({ gc: true });
  const claims: number[] = [];
  let counted = 0;
  doc.on('afterTransaction', (transaction: Y.Transaction) => {
    if (transaction.changed.size > 0 || transaction.deleteSet.clients.size > 0) counted++;
  });
  for (const update of updates) {
    for (const range of updateRanges(update.update)) claims.push(range.client, range.from, range.to);
    Y.applyUpdate(doc, update.update, origin);
  }
  return counted;
}

function inRuns(): number {
  const doc = new Y.Doc({ gc: true });
  const claims: number[] = [];
  let counted = 0;
  const rangesOf = (update: Uint8Array) => {
    const ranges = updateRanges(update);
    for (const range of ranges) claims.push(range.client, range.from, range.to);
    return ranges;
  };
  for (let i = 0; i < updates.length; ) {
    i = replayRun(doc, updates, i, (seq) => seq % every === 0, rangesOf, (edited) => void (edited && counted++), origin);
  }
  return counted;
}

console.log(`${updates.length.toLocaleString('en')} updates, runs of ${every.toLocaleString('en')}`);
for (let rep = 0; rep < 3; rep++) {
  let at = cpuMs();
  const alone = oneTransactionAnUpdate();
  const aloneMs = cpuMs() - at;
  at = cpuMs();
  const runs = inRuns();
  const runsMs = cpuMs() - at;
  const per = (ms: number) => ((ms * 1000) / updates.length).toFixed(1);
  console.log(`one transaction an update: ${per(aloneMs)} µs an update (${alone} edits); in runs: ${per(runsMs)} µs (${runs} edits)`);
}
