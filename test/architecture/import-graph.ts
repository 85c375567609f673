import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/**
 * The import graph of src/ and web/src/ and the layer rules of issue 23
 * (docs/ARCHITECTURE.md, "Layers"). test/architecture/layers.test.ts holds
 * today's violations to layer-baseline.json, so the baseline can only shrink.
 *
 *   npx tsx test/architecture/import-graph.ts                    summary
 *   npx tsx test/architecture/import-graph.ts --write-baseline   rewrite the baseline
 */

/** The layers, bottom (0) to edge (7): an import may go to the same or a lower rank, never up. */
export const RANKS: Record<string, number> = {
  'src/lib': 0, 'src/model': 0, 'src/policy': 0, 'src/errors.ts': 0, 'src/config.ts': 0,
  'src/docs': 0, // becomes src/model
  'src/persistence': 1,
  'src/files': 2, 'src/mail': 2, 'src/metrics': 2, 'src/limits': 2, 'src/billing': 2, 'src/support': 2,
  'src/sync': 3, 'src/events': 3, 'src/webhooks': 3,
  'src/domain': 4,
  'src/access': 5, 'src/auth': 5, // auth merges into access
  'src/operations': 6,
  'src/http': 7, 'src/api': 7, 'src/mcp': 7, 'src/app.ts': 7, 'src/bootstrap.ts': 7, 'src/main.ts': 7, 'src/cli': 7,
};
/** The only src/ folders web/src may import from (src/docs until it moves into src/model). */
export const WEB_MAY_IMPORT = ['src/model', 'src/docs'];

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BASELINE_FILE = path.join(import.meta.dirname, 'layer-baseline.json');
export const KINDS = ['circle-file', 'circle-folder', 'upward', 'web-reach'] as const;
export type Kind = (typeof KINDS)[number];

export type Edge = { from: string; to: string; typeOnly: boolean; specifier: string; line: number };
export type Violation = { kind: Kind; edge: Edge; key: string; rule: string };
export type Baseline = Record<Kind, string[]>;

const SOURCE = /\.tsx?$/;
const EXTENSIONS = ['.ts', '.tsx', '/index.ts', '/index.tsx'];

function listFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => SOURCE.test(name) && !name.endsWith('.d.ts'))
    .map((name) => `${dir}/${name.split(path.sep).join('/')}`);
}

function resolve(from: string, specifier: string, files: Set<string>): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  const stem = base.replace(/\.(js|jsx|mjs)$/, '');
  if (files.has(base)) return base;
  for (const candidate of [stem, base]) for (const ext of EXTENSIONS) if (files.has(candidate + ext)) return candidate + ext;
  return null;
}

/** Imports, re-exports, `import()` with a literal, and `import('x').T` type references (type-only). */
function importsOf(file: string, text: string): Array<Omit<Edge, 'from' | 'to'>> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Array<Omit<Edge, 'from' | 'to'>> = [];
  const add = (literal: ts.Node, typeOnly: boolean) => {
    if (!ts.isStringLiteralLike(literal)) return;
    found.push({ specifier: literal.text, typeOnly, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const allNamedTypes = !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || (!clause.name && allNamedTypes)));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const allNamedTypes = !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, node.isTypeOnly || allNamedTypes);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every edge between project files, one per (from, to): type-only only when every import of that pair is. */
export function buildGraph(): { files: string[]; edges: Edge[] } {
  const files = [...listFiles('src'), ...listFiles('web/src')].sort();
  const known = new Set(files);
  const byPair = new Map<string, Edge>();
  for (const from of files) {
    for (const found of importsOf(from, fs.readFileSync(path.join(ROOT, from), 'utf8'))) {
      const to = resolve(from, found.specifier, known);
      if (!to || to === from) continue;
      const key = `${from} -> ${to}`;
      const seen = byPair.get(key);
      if (!seen || (seen.typeOnly && !found.typeOnly)) byPair.set(key, { from, to, ...found });
    }
  }
  return { files, edges: [...byPair.values()].sort((a, b) => (a.from + a.to < b.from + b.to ? -1 : 1)) };
}

/** src/sync, web/src/table, or the file itself for top-level files such as src/app.ts. */
export function folderOf(file: string): string {
  const root = file.startsWith('web/src/') ? 'web/src' : 'src';
  const rest = file.slice(root.length + 1).split('/');
  return rest.length > 1 ? `${root}/${rest[0]}` : file;
}

/** Tarjan's strongly connected components: each component of more than one node is a circle. */
function circles(nodes: string[], next: Map<string, string[]>): Map<string, number> {
  const index = new Map<string, number>(), low = new Map<string, number>(), component = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>();
  let counter = 0, components = 0;
  const connect = (v: string) => {
    index.set(v, counter); low.set(v, counter++); stack.push(v); onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) { connect(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const members: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) { onStack.delete(w); members.push(w); if (w === v) break; }
    if (members.length > 1) { for (const m of members) component.set(m, components); components++; }
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return component;
}

/** The shortest way back from `start` to `goal`, to show a circle in a message. */
export function pathBetween(start: string, goal: string, next: Map<string, string[]>): string[] {
  const previous = new Map<string, string>([[start, start]]);
  for (const queue = [start]; queue.length; ) {
    const v = queue.shift()!;
    if (v === goal) break;
    for (const w of next.get(v) ?? []) if (!previous.has(w)) { previous.set(w, v); queue.push(w); }
  }
  if (!previous.has(goal)) return [];
  const way = [goal];
  while (way[0] !== start) way.unshift(previous.get(way[0]!)!);
  return way;
}

export function adjacency(pairs: Array<[string, string]>): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const [a, b] of pairs) if (!next.get(a)?.includes(b)) next.set(a, [...(next.get(a) ?? []), b]);
  return next;
}

export function analyse(graph = buildGraph()) {
  // Circles count type-only imports too: a type that two modules need from each other belongs below both.
  const fileNext = adjacency(graph.edges.map((e) => [e.from, e.to]));
  const folderNext = adjacency(graph.edges.filter((e) => folderOf(e.from) !== folderOf(e.to)).map((e) => [folderOf(e.from), folderOf(e.to)]));
  const fileCircle = circles(graph.files, fileNext);
  const folders = [...new Set(graph.files.map(folderOf))].sort();
  const folderCircle = circles(folders, folderNext);
  const violations: Violation[] = [];
  const flag = (kind: Kind, edge: Edge, rule: string) => violations.push({ kind, edge, key: `${edge.from} -> ${edge.to}`, rule });
  for (const edge of graph.edges) {
    const [a, b] = [folderOf(edge.from), folderOf(edge.to)];
    if (fileCircle.has(edge.from) && fileCircle.get(edge.from) === fileCircle.get(edge.to)) {
      flag('circle-file', edge, `an import circle between files (type-only imports count): ${[edge.from, ...pathBetween(edge.to, edge.from, fileNext)].join(' -> ')}`);
    }
    // Of a circle between folders, the edges that close it: not strictly down the ranks (every edge, in unranked web/src).
    const down = RANKS[a] !== undefined && RANKS[b] !== undefined && RANKS[a]! > RANKS[b]!;
    if (!down && a !== b && folderCircle.has(a) && folderCircle.get(a) === folderCircle.get(b)) {
      flag('circle-folder', edge, `an import circle between folders (type-only imports count): ${[a, ...pathBetween(b, a, folderNext)].join(' -> ')}`);
    }
    const web = [edge.from, edge.to].map((f) => f.startsWith('web/'));
    if (web[0] && !web[1] && !WEB_MAY_IMPORT.includes(b)) flag('web-reach', edge, `web/src may import from src/ only ${WEB_MAY_IMPORT.join(' and ')}`);
    if (!web[0] && web[1]) flag('web-reach', edge, 'nothing in src/ may import web/');
    if (!web[0] && !web[1] && RANKS[a] !== undefined && RANKS[b] !== undefined && RANKS[a]! < RANKS[b]!) {
      flag('upward', edge, `an import goes up the layers: ${a} (rank ${RANKS[a]}) -> ${b} (rank ${RANKS[b]})`);
    }
  }
  const unranked = folders.filter((f) => f.startsWith('src/') && RANKS[f] === undefined);
  const folderCircles = [...new Set(folderCircle.values())].map((c) => folders.filter((f) => folderCircle.get(f) === c));
  return { graph, violations, unranked, folderCircles, folderNext };
}

export function toBaseline(violations: Violation[]): Baseline {
  const baseline = Object.fromEntries(KINDS.map((k) => [k, [] as string[]])) as Baseline;
  for (const v of violations) baseline[v.kind].push(v.key);
  for (const k of KINDS) baseline[k] = [...new Set(baseline[k])].sort();
  return baseline;
}

export function readBaseline(): Baseline {
  const stored = fs.existsSync(BASELINE_FILE) ? (JSON.parse(fs.readFileSync(BASELINE_FILE, 'utf8')) as Partial<Baseline>) : {};
  return Object.fromEntries(KINDS.map((k) => [k, stored[k] ?? []])) as Baseline;
}

function summary() {
  const { graph, violations, unranked, folderCircles, folderNext } = analyse();
  const count = <T>(items: T[], keyOf: (item: T) => string) => {
    const counts = new Map<string, number>();
    for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
    return [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  };
  const runtime = graph.edges.filter((e) => !e.typeOnly).length;
  console.log(`${graph.files.length} files, ${graph.edges.length} edges (${runtime} runtime, ${graph.edges.length - runtime} type-only)\n`);
  console.log('violations by kind:');
  for (const kind of KINDS) console.log(`  ${kind.padEnd(14)} ${violations.filter((v) => v.kind === kind).length}`);
  console.log('\nby kind and folder pair:');
  for (const [pair, n] of count(violations, (v) => `${v.kind.padEnd(14)} ${folderOf(v.edge.from)} -> ${folderOf(v.edge.to)}`)) console.log(`  ${String(n).padStart(4)}  ${pair}`);
  console.log('\nfolder circles (runtime), with the pairs that import each other directly:');
  for (const members of folderCircles) {
    console.log(`  { ${members.join(', ')} }`);
    for (const a of members) for (const b of folderNext.get(a) ?? []) if (a < b && folderNext.get(b)?.includes(a)) console.log(`      ${a} <-> ${b}`);
  }
  console.log('\ntop upward imports (most imported targets from lower layers):');
  for (const [target, n] of count(violations.filter((v) => v.kind === 'upward'), (v) => `${v.edge.to}  <- ${folderOf(v.edge.from)}`).slice(0, 15)) console.log(`  ${String(n).padStart(4)}  ${target}`);
  if (unranked.length) console.log(`\nfolders without a rank in RANKS: ${unranked.join(', ')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  if (process.argv.includes('--write-baseline')) {
    const baseline = toBaseline(analyse().violations);
    fs.writeFileSync(BASELINE_FILE, `${JSON.stringify(baseline, null, 2)}\n`);
    console.log(`wrote ${path.relative(ROOT, BASELINE_FILE)}: ${KINDS.map((k) => `${baseline[k].length} ${k}`).join(', ')}`);
  } else summary();
}
