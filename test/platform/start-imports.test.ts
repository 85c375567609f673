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
 * load); Kysely is compiled into the bundle (scripts/build.ts).
 */

const NOT_AT_START = ['yazl', 'yauzl', 'csv-parse', 'csv-stringify/sync', 'mime-types', 'kysely'];

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
    // The recording works: the server's framework was imported through it.
    expect(imported.has('fastify')).toBe(true);
    expect(NOT_AT_START.filter((name) => imported.has(name))).toEqual([]);
  });
});
