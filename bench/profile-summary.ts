/**
 * Summarises a V8 CPU profile (`node --cpu-prof`) the way docs/PERFORMANCE.md
 * reports where a request's time goes: self time grouped by where the code
 * lives (PGlite, Yjs, Fastify, zod, Kysely, pg, Trellis modules, GC, ...), and
 * the heaviest functions.
 *
 *   npx tsx bench/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top 30] [--window 0.8,1] [--stretches 5] [--pauses pauses.<pid>.json]
 *
 * `--stretches N`: the N longest busy stretches (samples with no idle one
 * between them, under the same frame from the root: one macrotask, roughly
 * one pause of the event loop), each with its heaviest frames by inclusive
 * time, to see what a long event-loop pause was made of.
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
    // The first delta runs from the profile's start to its first sample: the inspector's `Profiler.start` ("dispatch"), not the code.
    if (i > 0 && at >= from && at <= to) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
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

/** The `count` longest runs of non-idle samples, each with the frames (Trellis's own and the packages') most often on its stacks. */
export function stretches(profile: Profile, count: number, framesEach = 12) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const runs: Array<{ start: number; micros: number; from: number; to: number }> = [];
  let at = profile.startTime;
  let current: { start: number; micros: number; from: number; to: number } | null = null;
  let currentOrigin: number | undefined;
  const root = profile.nodes[0]!.id;
  /** The frame right under the profile's root on this sample's stack (undefined: GC, program, idle). */
  const rootFrameOf = (id: number): number | undefined => {
    let node = id;
    while (parent.get(node) !== undefined && parent.get(node) !== root) node = parent.get(node)!;
    return byId.get(node)!.callFrame.url === '' && byId.get(node)!.callFrame.functionName.startsWith('(') ? undefined : node;
  };
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    // A new stretch at an idle sample or where the frame the stack starts from changes (another macrotask: a timer, an immediate, a socket's read).
    const origin = rootFrameOf(id);
    if (byId.get(id)!.callFrame.functionName === '(idle)' || (current && origin !== currentOrigin && origin !== undefined && currentOrigin !== undefined)) {
      if (current) runs.push(current);
      current = null;
      if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    }
    if (!current) currentOrigin = origin;
    current ??= { start: at - delta, micros: 0, from: i, to: i };
    current.micros += delta;
    current.to = i;
  });
  if (current) runs.push(current);
  const lines: string[] = [];
  for (const run of runs.sort((a, b) => b.micros - a.micros).slice(0, count)) {
    const inclusive = new Map<string, number>();
    for (let i = run.from; i <= run.to; i++) {
      const seen = new Set<string>();
      for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
        const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
        if (!url.includes('/src/') && !url.includes('node_modules') && !functionName.startsWith('(garbage')) continue;
        const key = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/(src|bench|test)\//, '$1/')}:${lineNumber + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
      }
    }
    lines.push(`stretch of ${(run.micros / 1000).toFixed(1)} ms at ${((run.start - profile.startTime) / 1e6).toFixed(2)} s:`);
    for (const [key, micros] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, framesEach)) lines.push(`  ${(micros / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
  return lines.join('\n');
}

/** What each pause of the event loop (`[start, end, CPU ms?]` in the profile's microseconds, bench/doc-trace-server.ts BENCH_PAUSES_DIR) was made of, the costliest first (by CPU where recorded: wall time also counts other processes' turns). */
export function pausesOf(profile: Profile, pauses: Array<[number, number, number?]>, count: number, framesEach = 40) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const times: number[] = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((at += delta));
  const lines: string[] = [`${pauses.length} pauses over 40 ms`];
  const cost = ([start, end, cpu]: [number, number, number?]) => cpu ?? (end - start) / 1000;
  for (const [start, end, cpu] of [...pauses].sort((a, b) => cost(b) - cost(a)).slice(0, count)) {
    const inclusive = new Map<string, number>();
    for (let i = 0; i < times.length; i++) {
      if (times[i]! < start || times[i]! > end) continue;
      const seen = new Set<string>();
      for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
        const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
        // A compiled bench server (bench/spawn-server.ts) bundles Trellis, Yjs and Hocuspocus into one file under dist/bench.
        if (!url.includes('/src/') && !url.includes('node_modules') && !url.includes('/dist/') && !functionName.startsWith('(garbage') && functionName !== '(idle)') continue;
        const key = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/.*\/(src|bench|test)\//, '$1/')}:${lineNumber + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
      }
    }
    lines.push(`pause of ${((end - start) / 1000).toFixed(1)} ms${cpu === undefined ? '' : ` (${cpu.toFixed(1)} ms CPU)`} at ${((start - profile.startTime) / 1e6).toFixed(2)} s:`);
    for (const [key, micros] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, framesEach)) lines.push(`  ${(micros / 1000).toFixed(1).padStart(8)} ms  ${key}`);
  }
  return lines.join('\n');
}

const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const topIndex = process.argv.indexOf('--top');
const windowIndex = process.argv.indexOf('--window');
const stretchesIndex = process.argv.indexOf('--stretches');
const pausesIndex = process.argv.indexOf('--pauses');
const window = (windowIndex >= 0 ? process.argv[windowIndex + 1]!.split(',').map(Number) : [0, 1]) as [number, number];
for (const file of files) {
  console.log(`# ${file}${windowIndex >= 0 ? ` (window ${window.join(' to ')} of its duration)` : ''}`);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  console.log(summarise(profile, topIndex >= 0 ? Number(process.argv[topIndex + 1]) : 25, window));
  if (pausesIndex >= 0) console.log(`\n${pausesOf(profile, JSON.parse(readFileSync(process.argv[pausesIndex + 1]!, 'utf8')) as Array<[number, number, number?]>, 8)}`);
  if (stretchesIndex >= 0) console.log(`\nlongest busy stretches:\n${stretches(profile, Number(process.argv[stretchesIndex + 1]))}`);
}
