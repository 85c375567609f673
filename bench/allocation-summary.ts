/**
 * Reads a sampled allocation profile (bench/allocation-sampling.mjs) the way
 * bench/profile-summary.ts reads a CPU profile: the bytes sampled in all,
 * by function allocating them (self) and by function on the stack
 * (inclusive); `--callers NAME` gives the stacks under which NAME allocated.
 *
 *   npx tsx bench/allocation-summary.ts FILE.heapprofile [--top 30] [--callers Map] [--depth 3]
 */
import { readFileSync } from 'node:fs';

type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children?: Node[] };

const [file, ...rest] = process.argv.slice(2);
const option = (name: string) => {
  const at = rest.indexOf(name);
  return at >= 0 ? rest[at + 1] : undefined;
};
const top = Number(option('--top') ?? 30);
const callersOf = option('--callers');
const depth = Number(option('--depth') ?? 3);
if (!file) throw new Error('usage: allocation-summary.ts FILE.heapprofile [--top N] [--callers NAME] [--depth N]');

function frameName(node: Node): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? url.split('/').pop() ?? '';
  return `${functionName || '(anonymous)'} [${where}:${lineNumber}]`;
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const callers = new Map<string, number>();
let total = 0;
const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);

// Iterative: a deep stack would overflow a recursive walk.
const stack: Array<{ node: Node; path: string[] }> = [{ node: (JSON.parse(readFileSync(file, 'utf8')) as { head: Node }).head, path: [] }];
while (stack.length > 0) {
  const { node, path } = stack.pop()!;
  const name = frameName(node);
  const here = [...path, name];
  total += node.selfSize;
  add(self, name, node.selfSize);
  for (const frame of new Set(here)) add(inclusive, frame, node.selfSize);
  if (callersOf && node.callFrame.functionName === callersOf) add(callers, path.slice(-depth).reverse().join(' < '), node.selfSize);
  for (const child of node.children ?? []) stack.push({ node: child, path: here });
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1).padStart(8)} MB`;
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${mb(bytes)}  ${key}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(0)} MB sampled`);
print('by the function allocating (self):', self);
print('by function on the stack (inclusive):', inclusive);
if (callersOf) print(`under which ${callersOf} allocated:`, callers);
