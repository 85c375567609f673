/**
 * What a fresh sync client applies: a V1 state's structure (clients, structs
 * by kind, delete-set ranges) and the CPU of `Y.applyUpdate` of it into an
 * empty document, in this process, several times (the first apply in a
 * process runs before V8 has optimized Yjs's decoder, as a fresh client's
 * does). With `--compare`, the same for `tableState`-like re-encodings:
 * the state applied and encoded again (gc'd), and as V2.
 *
 *   npx tsx bench/apply-state.ts FILE [--times 5] [--compare]
 *
 * FILE: a V1 update, e.g. what `BENCH_KEEP_STATE=FILE npx tsx
 * bench/cold-sync.ts --rows 50000 --rest` kept of the warm client's state.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import * as Y from 'yjs';

const file = process.argv[2];
if (!file) throw new Error('usage: apply-state.ts FILE [--times N] [--compare]');
const at = process.argv.indexOf('--times');
const times = at >= 0 ? Number(process.argv[at + 1]) : 5;
const bytes = new Uint8Array(readFileSync(file));

function structure(update: Uint8Array): string {
  const { structs, ds } = Y.decodeUpdate(update);
  const kinds = new Map<string, number>();
  const clients = new Set<number>();
  let contentKinds = new Map<string, number>();
  for (const struct of structs) {
    clients.add(struct.id.client);
    kinds.set(struct.constructor.name, (kinds.get(struct.constructor.name) ?? 0) + 1);
    if (struct instanceof Y.Item) contentKinds.set(struct.content.constructor.name, (contentKinds.get(struct.content.constructor.name) ?? 0) + 1);
  }
  let ranges = 0;
  let deleted = 0;
  for (const list of ds.clients.values()) {
    ranges += list.length;
    for (const item of list) deleted += item.len;
  }
  contentKinds = new Map([...contentKinds].sort((a, b) => b[1] - a[1]));
  return `${update.byteLength} bytes; ${clients.size} clients; structs ${structs.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}); content ${[...contentKinds].map(([k, n]) => `${k} ${n}`).join(', ')}; delete set ${ranges} ranges, ${deleted} ids`;
}

function applyCpu(update: Uint8Array, v2 = false, listened = false): number[] {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    const doc = new Y.Doc();
    // A provider listens for its document's updates, so Yjs encodes the applied transaction again for it.
    if (listened) doc.on('update', () => {});
    const before = process.cpuUsage();
    if (v2) Y.applyUpdateV2(doc, update);
    else Y.applyUpdate(doc, update);
    const cpu = process.cpuUsage(before);
    out.push(Math.round((cpu.user + cpu.system) / 1000));
    doc.destroy();
  }
  return out;
}

console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log(`as kept: ${structure(bytes)}`);
console.log(`  applyUpdate CPU ms, ${times} times in one process: ${applyCpu(bytes).join(', ')}`);
console.log(`  the same with an update listener, as a provider's document has: ${applyCpu(bytes, false, true).join(', ')}`);
{
  // What a bare Hocuspocus does for each fresh client: encode the loaded document.
  const doc = new Y.Doc({ gc: true });
  Y.applyUpdate(doc, bytes);
  const encodes: number[] = [];
  for (let i = 0; i < times; i++) {
    const before = process.cpuUsage();
    Y.encodeStateAsUpdate(doc);
    const cpu = process.cpuUsage(before);
    encodes.push(Math.round((cpu.user + cpu.system) / 1000));
  }
  console.log(`  encodeStateAsUpdate of the applied document CPU ms (a bare server's work for a fresh client): ${encodes.join(', ')}`);
  doc.destroy();
}
if (process.argv.includes('--compare')) {
  const doc = new Y.Doc({ gc: true });
  Y.applyUpdate(doc, bytes);
  const again = Y.encodeStateAsUpdate(doc);
  console.log(`applied and encoded again: ${structure(again)}`);
  console.log(`  applyUpdate CPU ms: ${applyCpu(again).join(', ')}`);
  const v2 = Y.encodeStateAsUpdateV2(doc);
  console.log(`as V2: ${v2.byteLength} bytes`);
  console.log(`  applyUpdateV2 CPU ms: ${applyCpu(v2, true).join(', ')}`);
}
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
