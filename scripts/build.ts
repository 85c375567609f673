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
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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
 * Packages left in node_modules, loaded there at run time; every other
 * package the sources import is compiled into the bundle. Node resolves,
 * reads and compiles an unbundled package file by file at every start
 * (~860 files before health); bundled, the server's start took ~0.4 s
 * less CPU (docs/PERFORMANCE.md, "h19-start"). Left out:
 * - packages with files of their own beside their code: PGlite (its wasm
 *   and data), sharp and ws's optional helpers (native), pino (its
 *   transports' worker scripts), @fastify/swagger (reads its package.json);
 * - packages src/lib/when-needed.ts loads with `require` at first use (a
 *   name esbuild cannot follow);
 * - the heavy ones only some requests import (S3, MCP, OpenID, the
 *   conversions' libraries, file-type): they load at first use either way.
 * And with them every package any of these depends on
 * (`externalPackageNames`): a package both bundled and loaded from
 * node_modules by one of them would be two copies (two Yjs, two zod).
 */
const EXTERNAL_ROOTS = [
  '@electric-sql/pglite',
  'sharp',
  'bufferutil',
  'utf-8-validate',
  'pino',
  '@fastify/swagger',
  'pg',
  'ioredis',
  'nodemailer',
  'jsdom',
  'dompurify',
  'yazl',
  'yauzl',
  'csv-parse',
  'csv-stringify',
  'mime-types',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  '@aws-sdk/s3-request-presigner',
  '@modelcontextprotocol/sdk',
  'openid-client',
  'docx',
  'mammoth',
  'pdfkit',
  'file-type',
];

/** The roots and everything they depend on (dependencies, peer and optional ones), by package name, from the installed manifests. */
export function externalPackageNames(roots: readonly string[] = EXTERNAL_ROOTS): Set<string> {
  const names = new Set<string>();
  const visit = (name: string, from: string) => {
    // Node's lookup: node_modules beside the dependent, then in each directory above it.
    let manifest: string | undefined;
    for (let dir = from; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', name, 'package.json');
      if (existsSync(candidate)) {
        manifest = candidate;
        break;
      }
      if (path.dirname(dir) === dir) break;
    }
    const key = `${name}@${manifest ?? ''}`;
    if (visited.has(key)) return;
    visited.add(key);
    names.add(name);
    if (!manifest) return;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const dependency of Object.keys(pkg[field] ?? {})) visit(dependency, path.dirname(manifest));
    }
  };
  const visited = new Set<string>();
  for (const name of roots) visit(name, root);
  return names;
}

const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * The external packages stay imports, resolved from node_modules at run
 * time; a package esbuild finds in a nested node_modules (a private copy of
 * another version, used only by the package beside it) is bundled whatever
 * its name, since at run time the bundle's import would find the top-level
 * copy instead.
 */
function externalPackages(external: Set<string>): import('esbuild').Plugin {
  return {
    name: 'external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.path.startsWith('node:') || !external.has(packageOf(args.path))) return undefined;
        if (args.pluginData === 'resolving') return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolving' });
        // Not installed (an optional dependency): left to its importer's own handling at run time.
        if (resolved.errors.length > 0) return { path: args.path, external: true };
        // node_modules may be a link (a worktree's); esbuild gives real paths.
        const fromTop = path.relative(realpathSync(path.join(root, 'node_modules')), resolved.path);
        const nested = fromTop.startsWith('..') || fromTop.includes(`${path.sep}node_modules${path.sep}`);
        return nested && !resolved.external ? resolved : { path: args.path, external: true };
      });
    },
  };
}

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
export async function bundleServer(entryPoints: Record<string, string>, outdir: string, options: { devPackages?: boolean } = {}) {
  // A bench server may import the test helpers, and with them the development packages (vitest, vite and its native
  // parts): those stay in node_modules too, with what they depend on. The server's own bundle leaves them out.
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const roots = options.devPackages ? [...EXTERNAL_ROOTS, ...Object.keys(manifest.devDependencies ?? {})] : EXTERNAL_ROOTS;
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
    plugins: [externalPackages(externalPackageNames(roots))],
    // Bundled CommonJS packages `require` Node's own modules; an ES module has no `require` of its own.
    banner: { js: "import{createRequire as __trellisCreateRequire}from'node:module';const require=__trellisCreateRequire(import.meta.url);" },
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
