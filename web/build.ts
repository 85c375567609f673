/**
 * Builds the web app into web/dist (never committed). `--if-stale` skips the
 * build when dist holds a build of exactly the current sources: `npm start`,
 * `npm ci` (prepare) and the test setup all call it, and only the first one
 * after a change pays for the build.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const webRoot = import.meta.dirname;
const repoRoot = path.resolve(webRoot, '..');
export const WEB_DIST = path.join(webRoot, 'dist');
const STAMP = path.join(WEB_DIST, 'build-stamp.json');

/** Files every build depends on besides the modules the bundle lists. */
const ALWAYS = ['web/index.html', 'web/vite.config.ts', 'web/build.ts', 'web/src/offline/service-worker.js', 'package-lock.json'];

/** A hash of these files' names and bytes (paths from the repository root): a build is current while it is unchanged. */
export function fingerprintFiles(files: string[]): string {
  const hash = createHash('sha256');
  for (const file of [...new Set(files)].sort()) {
    const absolute = path.join(repoRoot, file);
    hash.update(file).update('\0').update(existsSync(absolute) ? readFileSync(absolute) : 'missing').update('\0');
  }
  return hash.digest('hex');
}

const fingerprint = (files: string[]) => fingerprintFiles([...ALWAYS, ...files]);

export function webBuildIsFresh(): boolean {
  if (!existsSync(STAMP) || !existsSync(path.join(WEB_DIST, 'index.html'))) return false;
  try {
    const stamp = JSON.parse(readFileSync(STAMP, 'utf8')) as { sources: string[]; fingerprint: string };
    return stamp.fingerprint === fingerprint(stamp.sources);
  } catch {
    return false;
  }
}

export async function buildWeb(options: { ifStale?: boolean; quiet?: boolean } = {}): Promise<{ built: boolean }> {
  if (options.ifStale && webBuildIsFresh()) return { built: false };
  const { build } = await import('vite');
  // Vite derives production mode from NODE_ENV, which the test runner sets to `test`.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: path.join(webRoot, 'vite.config.ts'), mode: 'production', logLevel: options.quiet ? 'warn' : 'info' });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  const info = JSON.parse(readFileSync(path.join(WEB_DIST, 'build-info.json'), 'utf8')) as { sources: string[] };
  writeFileSync(STAMP, JSON.stringify({ sources: info.sources, fingerprint: fingerprint(info.sources) }));
  return { built: true };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  // prepare runs in the Docker image's dependency layer too, before the sources are copied in.
  if (!existsSync(path.join(webRoot, 'index.html'))) {
    console.log('web: no sources here, skipping the build');
  } else {
    const started = Date.now();
    const { built } = await buildWeb({ ifStale: process.argv.includes('--if-stale') });
    console.log(built ? `web: built into web/dist in ${((Date.now() - started) / 1000).toFixed(1)} s` : 'web: build is up to date');
  }
}
