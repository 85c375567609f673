import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCompiledServer, type CompiledServer } from '../helpers/compiled-server';

/**
 * An empty server loads what serving needs, not what a feature it has not
 * been asked for needs (docs/PERFORMANCE.md, issue 38 "Start time"): every
 * package it loads is resolved, read and compiled before health answers.
 * Zip archives, CSV and file names' types are loaded at their first use
 * (src/lib/when-needed.ts; their features' tests use them through that
 * load). Packages no left-out package depends on are compiled into the
 * bundle (scripts/build.ts): the server imports none of them from
 * node_modules, so none is a second copy beside the bundle's.
 */

const NOT_AT_START = ['yazl', 'yauzl', 'csv-parse', 'csv-stringify/sync', 'mime-types'];
const BUNDLED = ['kysely', 'fastify', 'yjs', 'y-protocols/awareness', '@hocuspocus/server', 'prosemirror-model', 'y-prosemirror', 'markdown-it', 'prom-client'];

let compiled: CompiledServer;
const recorded = path.join(os.tmpdir(), `trellis-start-imports-${process.pid}.txt`);

beforeAll(async () => {
  writeFileSync(recorded, '');
  compiled = await startCompiledServer({ NODE_OPTIONS: `--import=${path.resolve('test/helpers/record-imports.mjs')}`, RECORD_IMPORTS_TO: recorded });
}, 300_000);

afterAll(async () => {
  await compiled?.dispose();
  rmSync(recorded, { force: true });
});

describe('the compiled server at start', () => {
  it('answers health without loading the packages of features no request has used', async () => {
    expect((await fetch(`${compiled.server.url}/api/health`)).status).toBe(200);
    const imported = new Set(readFileSync(recorded, 'utf8').split('\n').filter(Boolean));
    // The recording works: the logger, left in node_modules, was imported through it.
    expect(imported.has('pino')).toBe(true);
    expect(NOT_AT_START.filter((name) => imported.has(name))).toEqual([]);
  });

  it('imports the packages it bundles from the bundle only', async () => {
    expect((await fetch(`${compiled.server.url}/api/health`)).status).toBe(200);
    const imported = new Set(readFileSync(recorded, 'utf8').split('\n').filter(Boolean));
    expect(BUNDLED.filter((name) => imported.has(name))).toEqual([]);
  });
});
