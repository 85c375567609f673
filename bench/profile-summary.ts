/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) the way docs/PERFORMANCE.md
 * reports where a request's time goes: self time grouped by where the code
 * lives (PGlite, Yjs, Fastify, zod, Kysely, pg, Trellis modules, GC, ...), and
 * the heaviest functions.
 *
 *   npx tsx bench/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top 30] [--window 0.8,1]
 */
import { readFileSync } from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

/** Where a frame's code lives, by its URL. */
function groupOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)') return name;
  if (url === '') return name.startsWith('(') ? name : 'native/builtins';
  if (url.startsWith('node:')) return 'node internals';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) {
    const pkg = module[1]!;
    if (pkg === '@electric-sql/pglite') return url.endsWith('.wasm') || url.includes('wasm') ? 'PGlite (wasm)' : 'PGlite (js)';
    return pkg;
  }
  const src = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]!.split('/')[0]}`;
  return url.startsWith('wasm://') ? 'PGlite (wasm)' : url;
}

/** `window`: only the samples between these fractions of the profile's duration (e.g. [0.8, 1] for its last fifth). */
export function summarise(profile: Profile, top = 25, window: [number, number] = [0, 1]) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const duration = profile.endTime - profile.startTime;
  const [from, to] = [profile.startTime + window[0] * duration, profile.startTime + window[1] * duration];
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at >= from && at <= to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, micros] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const group = groupOf(url, functionName);
    groups.set(group, (groups.get(group) ?? 0) + micros);
    const key = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/(src|bench|test)\//, '$1/')}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + micros);
  }
  const busy = total - (groups.get('(idle)') ?? 0);
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
  const lines: string[] = [`profile: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy`];
  lines.push('', 'self time by where the code lives (share of busy time):');
  for (const [group, micros] of [...groups].sort((a, b) => b[1] - a[1])) if (group !== '(idle)') lines.push(`  ${pct(micros, busy).padStart(6)}  ${group}`);
  lines.push('', `heaviest functions (self):`);
  for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(micros, busy).padStart(6)}  ${name}`);
  return lines.join('\n');
}

const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const topIndex = process.argv.indexOf('--top');
const windowIndex = process.argv.indexOf('--window');
const window = (windowIndex >= 0 ? process.argv[windowIndex + 1]!.split(',').map(Number) : [0, 1]) as [number, number];
for (const file of files) {
  console.log(`# ${file}${windowIndex >= 0 ? ` (window ${window.join(' to ')} of its duration)` : ''}`);
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, topIndex >= 0 ? Number(process.argv[topIndex + 1]) : 25, window));
}
