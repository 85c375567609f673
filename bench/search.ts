/**
 * Search (issue 15): 100,000 rows in 200 workspaces (500 each, the free
 * cap) plus doc sections, all readable by the caller, then `GET /api/search`
 * over HTTP for queries of different selectivity. The projections are
 * filled in bulk (search reads only them; the observer writes the same
 * rows), then ANALYZEd. Prints figures; asserts nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { request as undiciRequest } from 'undici';
import { ManualClock, startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { replaceDocSections } from '../src/persistence/doc-sections';
import { searchProjections } from '../src/persistence/search';
import { searchProjectionsExact } from './search-baseline';

type Figures = Record<string, number | string>;

const WORKSPACES = 200;
const ROWS_PER_WORKSPACE = 500;
const SECTIONS_PER_WORKSPACE = 20;
const RUNS_PER_QUERY = 30;

// Text from the project's own docs, sampled token by token, so word frequencies are those of
// real English prose (a few words everywhere, most rare); each row also has a unique reference.
const TOKENS = readdirSync(path.resolve(import.meta.dirname, '../docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => readFileSync(path.resolve(import.meta.dirname, '../docs', file), 'utf8'))
  .join(' ')
  .toLowerCase()
  .match(/[a-z]{3,}/g)!;
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
const sentence = (words: number) => Array.from({ length: words }, () => pick(TOKENS)).join(' ');
const reference = (n: number) => `TRL-${(n * 7919 + 104_729).toString(36).toUpperCase()}`;

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function runSearchBench(): Promise<Figures> {
  await prepareTemplate();
  // Search allows 120 calls a minute per principal: the benchmark moves the service clock on instead of waiting.
  const clock = new ManualClock();
  const t = await startTestApp({ clock });
  try {
    const { cookie } = await signIn(t, 'search-bench@example.com');
    const user = await t.services.db.selectFrom('users').select(['id', 'primaryOrgId']).where('email', '=', 'search-bench@example.com').executeTakeFirstOrThrow();
    const orgId = user.primaryOrgId!;
    const db = t.services.db;

    const loadStart = performance.now();
    for (let w = 0; w < WORKSPACES; w++) {
      const workspaceId = `ws_bench${w}`;
      const sheetId = `sf_sheet${w}`;
      const docId = `sf_doc${w}`;
      await db
        .insertInto('workspaces')
        .values({ id: workspaceId, orgId, slug: `bench-${w}`, name: `${sentence(2)} board ${w}`, mode: 'table', visibility: 'private', createdById: user.id, createdByType: 'user' })
        .execute();
      await db
        .insertInto('surfaces')
        .values([
          { id: sheetId, workspaceId, slug: 'table', kind: 'table', name: 'Table', position: 0 },
          { id: docId, workspaceId, slug: 'doc', kind: 'doc', name: 'Doc', position: 1 },
        ])
        .execute();
      await db.insertInto('memberships').values({ workspaceId, principalId: user.id, principalType: 'user', role: 'owner', viaUserId: null }).execute();
      const rows = Array.from({ length: ROWS_PER_WORKSPACE }, (_, i) => ({
        id: `r${w}_${i}`,
        workspaceId,
        surfaceId: sheetId,
        position: i,
        data: JSON.stringify({ title: sentence(5), status: pick(['todo', 'doing', 'done']), notes: sentence(15), ref: reference(w * ROWS_PER_WORKSPACE + i), estimate: Math.floor(random() * 20) }),
        createdById: user.id,
        createdByType: 'user' as const,
        createdAt: new Date(Date.UTC(2027, 0, 1) + (w * ROWS_PER_WORKSPACE + i) * 1000),
        updatedAt: new Date(Date.UTC(2027, 0, 1) + (w * ROWS_PER_WORKSPACE + i) * 1000),
      }));
      await db.insertInto('tableRows').values(rows).execute();
      await replaceDocSections(
        db,
        workspaceId,
        docId,
        Array.from({ length: SECTIONS_PER_WORKSPACE }, (_, index) => ({ index, heading: sentence(3), level: 2, text: sentence(60) })),
        new Date(),
      );
    }
    await sql`analyze`.execute(db);
    const loadSeconds = (performance.now() - loadStart) / 1000;
    console.error(`  loaded in ${round(loadSeconds)} s`);

    const headers = { cookie: `svc-session=${cookie}` };
    let calls = 0;
    const paced = () => {
      if (++calls % 100 === 0) clock.advance(61_000);
    };
    const countOf = async (q: string) => {
      paced();
      const res = await undiciRequest(`${t.url}/api/search?q=${encodeURIComponent(q)}&limit=20`, { headers });
      return ((await res.body.json()) as { count: number }).count;
    };
    const time = async (queries: string[], runs: number) => {
      const times: number[] = [];
      const took: number[] = [];
      for (let run = 0; run < runs; run++) {
        for (const q of queries) {
          paced();
          const start = performance.now();
          const res = await undiciRequest(`${t.url}/api/search?q=${encodeURIComponent(q)}&limit=20`, { headers });
          const body = (await res.body.json()) as { took: number; hits: unknown[] };
          if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}`);
          times.push(performance.now() - start);
          took.push(body.took);
        }
      }
      return { http: times.sort((a, b) => a - b), took: took.sort((a, b) => a - b) };
    };

    // Query mixes by how much they match.
    const counts = new Map<string, number>();
    for (const token of TOKENS) counts.set(token, (counts.get(token) ?? 0) + 1);
    const once = [...counts].filter(([, n]) => n === 1).map(([word]) => word);
    const references = Array.from({ length: 10 }, () => reference(Math.floor(random() * WORKSPACES * ROWS_PER_WORKSPACE)));
    const rare = Array.from({ length: 10 }, () => pick(once));
    const phrases = Array.from({ length: 10 }, () => sentence(2));
    const common = ['the', 'and', 'for'];
    const short = ['qu', 'zz'];
    // Warm the routes and the caches.
    for (let i = 0; i < 20; i++) await countOf(pick(once));
    const matches = async (queries: string[]) => Math.round((await Promise.all(queries.map(countOf))).reduce((a, b) => a + b, 0) / queries.length);
    const figures: Figures = {
      database: t.services.database.kind,
      'rows / workspaces / doc sections': `${WORKSPACES * ROWS_PER_WORKSPACE} / ${WORKSPACES} / ${WORKSPACES * SECTIONS_PER_WORKSPACE}`,
      'bulk load + analyze s': round(loadSeconds),
    };
    // Broad queries match tens of thousands of rows and take longer each: fewer runs.
    for (const [label, queries, runs] of [
      ['row reference', references, RUNS_PER_QUERY],
      ['rare word', rare, RUNS_PER_QUERY],
      ['two-word phrase', phrases, RUNS_PER_QUERY],
      ['common word', common, 5],
      ['two letters', short, 5],
    ] as const) {
      const { http, took } = await time([...queries], runs);
      console.error(`  ${label}: p50 ${round(percentile(http, 50))} ms`);
      figures[`${label}: matches (mean)`] = await matches([...queries]);
      figures[`${label}: HTTP p50 ms`] = round(percentile(http, 50));
      figures[`${label}: HTTP p95 ms`] = round(percentile(http, 95));
      figures[`${label}: took p50 ms`] = percentile(took, 50);
    }

    // The query alone, both ways in this run: every match read, counted and scored (before issue 21
    // goal 4) against at most SEARCH_CANDIDATES of each kind. Same workspaces, same page.
    const workspaceIds = (await db.selectFrom('memberships').select('workspaceId').where('principalId', '=', user.id).execute()).map((m) => m.workspaceId);
    const kinds = new Set(['workspace', 'row', 'doc-section'] as const);
    const timeQuery = async (run: (text: string) => Promise<unknown>, queries: readonly string[], runs: number) => {
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        for (const text of queries) {
          const start = performance.now();
          await run(text);
          times.push(performance.now() - start);
        }
      }
      return times.sort((a, b) => a - b);
    };
    for (const [label, queries, runs] of [
      ['row reference', references, 10],
      ['rare word', rare, 10],
      ['common word', common, 3],
      ['two letters', short, 3],
    ] as const) {
      const exact = await timeQuery((text) => searchProjectionsExact(db, { workspaceIds, text, kinds, limit: 20, offset: 0 }), queries, runs);
      const bounded = await timeQuery((text) => searchProjections(db, { workspaceIds, text, kinds, limit: 20, offset: 0 }), queries, runs);
      figures[`${label}: query p50 ms, exact / bounded`] = `${round(percentile(exact, 50))} / ${round(percentile(bounded, 50))} (${round(percentile(exact, 50) / percentile(bounded, 50))}x)`;
      figures[`${label}: query p95 ms, exact / bounded`] = `${round(percentile(exact, 95))} / ${round(percentile(bounded, 95))}`;
    }
    figures['load average at the end'] = os.loadavg().map((l) => l.toFixed(1)).join(' ');
    return figures;
  } finally {
    await t.close();
    await t.store.dispose();
  }
}
