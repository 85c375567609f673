import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildGraph, ROOT } from './import-graph';

/**
 * src/model is what the browser shares with the server (issue 23): it must
 * stay browser-safe, and the web app takes the API's records from its zod
 * schemas as types only, so neither zod nor the schemas reach the bundle.
 */

/** Packages src/model may use: each runs in a browser as well as in Node. */
const BROWSER_PACKAGES = ['zod', 'yjs', 'ohm-js', 'y-prosemirror', 'lib0', 'markdown-it', 'prosemirror-model', 'prosemirror-markdown', 'prosemirror-state', 'prosemirror-transform'];

function packageSpecifiers(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)]
    .map((match) => match[1] ?? match[2])
    .filter((specifier) => !specifier.startsWith('.'));
}

describe('the browser-safe model (issue 23)', () => {
  const { files, edges } = buildGraph();

  it('imports nothing outside src/model but browser-safe packages', () => {
    const outside = edges.filter((edge) => edge.from.startsWith('src/model/') && !edge.to.startsWith('src/model/')).map((edge) => `${edge.from}:${edge.line} -> ${edge.to}`);
    const packages = files
      .filter((file) => file.startsWith('src/model/'))
      .flatMap((file) => packageSpecifiers(file).map((specifier) => ({ file, specifier })))
      .filter(({ specifier }) => !BROWSER_PACKAGES.includes(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]))
      .map(({ file, specifier }) => `${file} -> ${specifier}`);
    expect(outside, 'src/model may import only src/model: move the piece it needs down into src/model').toEqual([]);
    expect(packages, `src/model runs in the browser: no node: modules or server packages (allowed: ${BROWSER_PACKAGES.join(', ')})`).toEqual([]);
  });

  it('gives the web app the API schemas as types only', () => {
    const valueImports = edges
      .filter((edge) => edge.from.startsWith('web/src/') && edge.to.startsWith('src/model/schemas/') && !edge.typeOnly)
      .map((edge) => `${edge.from}:${edge.line} -> ${edge.to}`);
    expect(valueImports, 'use `import type` (or `export type`) for src/model/schemas in web/src: a value import would bundle zod and the schemas').toEqual([]);
  });
});
