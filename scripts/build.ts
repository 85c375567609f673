/**
 * Builds what `npm start` runs: the web app (web/build.ts, into web/dist)
 * and the server, so that production starts compiled JavaScript rather
 * than compiling TypeScript in the process at every start (tsx held ~100 MB
 * more resident and seconds more to start):
 *
 * - dist/server/main.js: src/main.ts bundled by esbuild into an ES module
 *   (and chunks for the modules it imports only when needed), packages left
 *   to node_modules but for BUNDLED_PACKAGES. It sits two levels under the repository
 *   like src/main.ts's modules do, so paths such as web/dist resolve alike.
 *   Beside it, the worker threads' scripts: dist/server/doc-conversion-worker.js
 *   for Word and PDF conversions, dist/server/history-worker.js for the
 *   version history's replay (code they share goes in chunks).
 * - dist/pglite-template (src/persistence/pglite-template.ts): an embedded
 *   database created and migrated here, in the build's process, which a
 *   fresh DATA_DIR copies at its first start instead of running initdb in
 *   the server.
 *
 * `--if-stale` skips each part when it is current: the web app as
 * web/build.ts decides, the bundle when no source
 * it was built from (nor package-lock.json, nor this file) changed, the
 * template when it was made by the installed PGlite with this build's
 * migrations. `npm start`, `npm ci` (prepare) and the Docker image call it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
// esbuild comes with tsx (a dependency), which is what compiled these sources before.
import { build } from 'esbuild';
import { fingerprintFiles } from '../web/build';

const root = path.resolve(import.meta.dirname, '..');
export const SERVER_BUNDLE = path.join(root, 'dist/server/main.js');
export const PGLITE_TEMPLATE = path.join(root, 'dist/pglite-template');
const STAMP = path.join(root, 'dist/server/build-stamp.json');
const ALWAYS = ['package-lock.json', 'scripts/build.ts'];

const fingerprint = (files: string[]) => fingerprintFiles([...ALWAYS, ...files]);

export function serverBuildIsFresh(): boolean {
  if (!existsSync(SERVER_BUNDLE) || !existsSync(STAMP)) return false;
  try {
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8')) as { sources: string[]; fingerprint: string };
    return stamp.fingerprint === fingerprint(stamp.sources);
  } catch {
    return false;
  }
}

/**
 * Packages compiled into the bundle rather than loaded from node_modules.
 * Kysely's ES build is 264 files that Node resolves, reads and compiles one
 * by one at every start (~0.1 s); bundled, it is the part the server uses.
 * Only a package no other package imports goes here: bundled, it would be a
 * second copy beside the one node_modules gives them.
 */
const BUNDLED_PACKAGES = new Set(['kysely']);

const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** Every other package stays in node_modules (esbuild's `packages: 'external'`, less these). */
const externalPackages: import('esbuild').Plugin = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED_PACKAGES.has(packageOf(args.path)) ? undefined : { path: args.path, external: true }));
  },
};

/** The worker threads' scripts, each an entry of its own that src/lib/worker-pool.ts finds beside the compiled module that starts it: conversions (docs/IMPORT-EXPORT.md), the history pass and the embedded database (docs/ARCHITECTURE.md). */
export const WORKER_ENTRIES: Record<string, string> = {
  'doc-conversion-worker': path.join(root, 'src/files/doc-conversion-worker.ts'),
  'history-worker': path.join(root, 'src/sync/history-worker.ts'),
  'pglite-thread-worker': path.join(root, 'src/persistence/pglite-thread-worker.ts'),
};

/**
 * Bundles `entryPoints` (and the worker scripts) into `outdir` the way
 * production runs the server; bench/spawn-server.ts compiles its servers
 * with it so that benches measure that code, not tsx's.
 */
export async function bundleServer(entryPoints: Record<string, string>, outdir: string) {
  // Chunks of an earlier build go: their names change with their content.
  rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  return build({
    entryPoints: { ...entryPoints, ...WORKER_ENTRIES },
    outdir,
    bundle: true,
    // Modules the sources import only when needed (the S3 store, ...) stay in chunks of their own: inlined, their packages would load at start.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [externalPackages],
    // Whitespace and comments out (names stay, for stack traces): Node keeps a module's source in the heap, and one
    // non-ASCII character in a comment made the whole bundle a two-byte string (2.5 MB for 1.3 MB of source).
    minifyWhitespace: true,
    charset: 'ascii',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
}

export async function buildServer(options: { ifStale?: boolean } = {}): Promise<{ built: boolean }> {
  if (options.ifStale && serverBuildIsFresh()) return { built: false };
  const result = await bundleServer({ main: path.join(root, 'src/main.ts') }, path.dirname(SERVER_BUNDLE));
  const sources = Object.keys(result.metafile.inputs).map((file) => path.relative(root, path.resolve(root, file)));
  writeFileSync(STAMP, JSON.stringify({ sources, fingerprint: fingerprint(sources) }));
  return { built: true };
}

/** Creates the template database in a scratch directory, then moves it into place with its stamp. */
export async function buildTemplate(options: { ifStale?: boolean } = {}): Promise<{ built: boolean }> {
  const { installedPGliteVersion, readTemplateStamp, stampFileOf } = await import('../src/persistence/pglite-template');
  const { dropTemplateDatabases, knownMigrations, openDatabase } = await import('../src/persistence/database');
  // trimmed: made without initdb's template databases (a template made before is made again).
  const wanted = { pglite: installedPGliteVersion(), migrations: knownMigrations(), trimmed: true };
  const current = readTemplateStamp(PGLITE_TEMPLATE);
  if (options.ifStale && current && JSON.stringify(current) === JSON.stringify(wanted)) return { built: false };
  const scratch = `${PGLITE_TEMPLATE}.building`;
  rmSync(scratch, { recursive: true, force: true });
  const database = await openDatabase({ dataDir: scratch });
  await dropTemplateDatabases(database.db);
  await database.close();
  rmSync(PGLITE_TEMPLATE, { recursive: true, force: true });
  rmSync(stampFileOf(PGLITE_TEMPLATE), { force: true });
  await fs.rename(path.join(scratch, 'pglite'), PGLITE_TEMPLATE);
  rmSync(scratch, { recursive: true, force: true });
  writeFileSync(stampFileOf(PGLITE_TEMPLATE), JSON.stringify(wanted));
  return { built: true };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  // prepare runs in the Docker image's dependency layer too, before the sources are copied in.
  if (!existsSync(path.join(root, 'src/main.ts'))) {
    console.log('server: no sources here, skipping the build');
  } else {
    const ifStale = process.argv.includes('--if-stale');
    let started = Date.now();
    const { buildWeb } = await import('../web/build');
    const web = await buildWeb({ ifStale });
    console.log(web.built ? `web: built into web/dist in ${((Date.now() - started) / 1000).toFixed(1)} s` : 'web: build is up to date');
    started = Date.now();
    const server = await buildServer({ ifStale });
    console.log(server.built ? `server: built into dist/server in ${((Date.now() - started) / 1000).toFixed(1)} s` : 'server: build is up to date');
    started = Date.now();
    const template = await buildTemplate({ ifStale });
    console.log(template.built ? `server: embedded database template made in ${((Date.now() - started) / 1000).toFixed(1)} s` : 'server: embedded database template is up to date');
  }
  // PGlite's module keeps handles open after close.
  process.exit(0);
}
