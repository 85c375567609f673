import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';

const webRoot = import.meta.dirname;
const repoRoot = path.resolve(webRoot, '..');

/**
 * Emits `sw.js` with the app shell's file list baked in (hashed names change
 * every build, so the worker's cache name does too), and `build-info.json`
 * listing every project source the bundle was built from with its hash, so
 * `npm start` and the tests can tell whether the build is stale.
 */
function shellManifest(): Plugin {
  return {
    name: 'trellis-shell-manifest',
    apply: 'build',
    generateBundle(_options, bundle) {
      // Fonts of other scripts are fetched (and kept) only when a page needs them.
      const files = Object.keys(bundle).filter((name) => !name.endsWith('.map') && (!/\.woff2?$/.test(name) || /-latin-wght-normal/.test(name)));
      const version = createHash('sha256').update(files.sort().join('\n')).digest('hex').slice(0, 12);
      const worker = readFileSync(path.join(webRoot, 'src/offline/service-worker.js'), 'utf8')
        .replace('__SHELL_VERSION__', version)
        .replace('__SHELL_FILES__', JSON.stringify(['/', ...files.filter((name) => name !== 'index.html').map((name) => `/${name}`)]));
      this.emitFile({ type: 'asset', fileName: 'sw.js', source: worker });

      const sources = new Set<string>();
      for (const output of Object.values(bundle)) {
        if (output.type !== 'chunk') continue;
        for (const id of output.moduleIds) {
          const file = id.split('?')[0]!;
          if (path.isAbsolute(file) && file.startsWith(repoRoot) && !file.includes(`${path.sep}node_modules${path.sep}`)) sources.add(path.relative(repoRoot, file));
        }
      }
      this.emitFile({ type: 'asset', fileName: 'build-info.json', source: JSON.stringify({ sources: [...sources].sort() }, null, 1) });
    },
  };
}

export default defineConfig({
  root: webRoot,
  base: '/',
  publicDir: path.join(webRoot, 'public'),
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(webRoot, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
  },
  plugins: [shellManifest()],
});
