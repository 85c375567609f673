// Bundles the client and its sync helper into dist/. The sync helper reads
// the Y layouts with the server's own model (src/model), which is bundled in;
// the packages it builds on stay dependencies (peer, for the sync helper).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/index.ts', 'src/sync.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  packages: 'external',
  sourcemap: true,
});
