/**
 * Attribution figures (issue 25, item 3; docs/ATTRIBUTION.md). Prints
 * figures; asserts only that the spans cover the text read.
 *
 * A doc typed by three principals (two people and an agent, taking turns
 * every 500 updates) from the first N (5,000 and 20,000) transactions of the automerge-paper
 * editing trace (one update each, inserts and deletes), written straight to
 * the durable log. Measured in one run:
 * 1. `GET /doc?attribution=1` with the whole history unfolded in the log,
 *    against `GET /doc?format=text` of the same doc (the baseline);
 * 2. the fold alone (reading the folded rows again, decoding them and
 *    writing the ranges; run in a transaction rolled back), against the
 *    compaction that carries it (history passes, snapshot, delete);
 * 3. the attribution read again once the log is folded (the table alone),
 *    and the rows the table holds.
 *
 *   npx tsx bench/attribution.ts [--updates 20000]
 */
import { pathToFileURL } from 'node:url';
import * as Y from 'yjs';
import { bodyFragment } from '../src/model/doc/body';
import { appendUpdates } from '../src/persistence/document-log';
import { countAttributionRows, foldAttribution, loadAttribution, rangesOfLog } from '../src/persistence/attribution';
import { startTestApp, type TestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { createWorkspace, insertKey, signInUser } from '../test/workspaces/helpers';
import { loadTrace } from './doc';

type Figures = Record<string, number | string>;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function medianMs(times: number, run: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  return round(samples.sort((a, b) => a - b)[Math.floor(times / 2)]!);
}

async function ok(t: TestApp, path: string, as: Parameters<TestApp['request']>[2]) {
  const res = await t.request('GET', path, as);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

class Rollback extends Error {}

/** Sizes run by default: the tail compaction leaves at most (COMPACT_AFTER_UPDATES), and four times that (a log never compacted). */
const SIZES = [5_000, 20_000];

export async function runAttributionBench(options: { updates?: number } = {}): Promise<Figures> {
  await prepareTemplate();
  const figures: Figures = {};
  for (const updates of options.updates ? [options.updates] : SIZES) {
    for (const [name, value] of Object.entries(await figuresFor(updates))) figures[`${updates} updates: ${name}`] = value;
  }
  return figures;
}

async function figuresFor(updates: number): Promise<Figures> {
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const ada = await signInUser(t, 'ada@example.com');
    const bob = await signInUser(t, 'bob@example.com');
    const ws = await createWorkspace(t, ada, { name: 'Bench attribution', slug: 'bench-attribution', mode: 'doc' });
    const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'typist' });
    const document = ws.primarySurface.syncDocument as string;
    const base = '/api/workspaces/bench-attribution';

    // The history on a local replica, one update per trace transaction.
    const trace = loadTrace();
    const writer = new Y.Doc();
    const log: Uint8Array[] = [];
    writer.on('update', (u: Uint8Array) => log.push(u));
    const text = new Y.XmlText();
    writer.transact(() => {
      const paragraph = new Y.XmlElement('paragraph');
      bodyFragment(writer).insert(0, [paragraph]);
      paragraph.insert(0, [text]);
    });
    for (const txn of trace.txns.slice(0, updates - 1)) {
      writer.transact(() => {
        for (const [pos, del, ins] of txn.patches) {
          if (del > 0) text.delete(pos, del);
          if (ins) text.insert(pos, ins);
        }
      });
    }
    const authors = [
      { principalType: 'user' as const, id: ada.userId },
      { principalType: 'user' as const, id: bob.userId },
      { principalType: 'agent' as const, id: agent.agentId },
    ];
    await appendUpdates(t.services.db, log.map((update, i) => ({ document, update, author: authors[Math.floor(i / 500) % 3]!, derived: true })));
    const expected = text.toString();
    writer.destroy();

    // The engine loads the document on the first read of any kind: not part of attribution.
    await ok(t, `${base}/doc?format=text`, { as: ada.as });
    const first = performance.now();
    const read = await ok(t, `${base}/doc?attribution=1`, { as: ada.as });
    const firstMs = performance.now() - first;
    const spans = read.body.spans as Array<{ text: string }>;
    if (spans.map((s) => s.text).join('') !== expected) throw new Error('the spans do not cover the text');
    const figures: Figures = {
      'updates in the log': log.length,
      'text, characters': expected.length,
      'spans': spans.length,
      'GET /doc?format=text, ms (median of 5; baseline)': await medianMs(5, () => ok(t, `${base}/doc?format=text`, { as: ada.as })),
      'GET /doc?attribution=1, whole history unfolded, first read, ms': round(firstMs),
      'GET /doc?attribution=1, whole history unfolded, again (log read on from the last), ms (median of 5)': await medianMs(5, () => ok(t, `${base}/doc?attribution=1`, { as: ada.as })),
      'loading the ranges from the log alone, cold, ms (median of 5)': await medianMs(5, () => loadAttribution(t.services.db, document)),
    };

    // The fold alone, over every logged row, then undone: its read (before the log head is locked) and its write (under the lock).
    let readMs = 0;
    let writeMs = 0;
    await t.services.db
      .transaction()
      .execute(async (tx) => {
        let start = performance.now();
        const ranges = await rangesOfLog(tx, document, 0, Number.MAX_SAFE_INTEGER);
        readMs = performance.now() - start;
        start = performance.now();
        await foldAttribution(tx, document, ranges);
        writeMs = performance.now() - start;
        throw new Rollback();
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    figures['fold: reading the ranges of every logged row (before the lock), ms'] = round(readMs);
    figures['fold: writing them (under the lock, with the snapshot), ms'] = round(writeMs);
    const foldMs = readMs + writeMs;

    const start = performance.now();
    for (let pass = 0; pass < 50; pass++) {
      await t.services.sync.compactNow(document);
      const left = await t.services.db.selectFrom('documentUpdates').select((eb) => eb.fn.countAll<number>().as('n')).where('document', '=', document).executeTakeFirstOrThrow();
      if (Number(left.n) === 0) break;
    }
    figures['compaction of the whole log (history passes, snapshot, fold, delete), ms'] = round(performance.now() - start);
    figures['fold / compaction'] = round(foldMs / (performance.now() - start), 3);
    figures['attribution table rows after the fold'] = await countAttributionRows(t.services.db, document);
    const afterStart = performance.now();
    const after = await ok(t, `${base}/doc?attribution=1`, { as: ada.as });
    const afterMs = performance.now() - afterStart;
    if (JSON.stringify(after.body.spans) !== JSON.stringify(read.body.spans)) throw new Error('the spans changed across the fold');
    figures['GET /doc?attribution=1, log folded, first read, ms'] = round(afterMs);
    figures['GET /doc?attribution=1, log folded, again, ms (median of 5)'] = await medianMs(5, () => ok(t, `${base}/doc?attribution=1`, { as: ada.as }));
    figures['GET /doc?format=text, log folded, ms (median of 5; baseline)'] = await medianMs(5, () => ok(t, `${base}/doc?format=text`, { as: ada.as }));
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--updates');
  const figures = await runAttributionBench({ updates: at > 0 ? Number(process.argv[at + 1]) : undefined });
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(70)} ${value}`);
  process.exit(0);
}
