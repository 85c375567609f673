/**
 * Version history figures (issue 17). Prints figures; asserts only that
 * what a version shows is what was written.
 *
 * 1. A 5,000-row sheet edited in ten sessions (bulk PATCH of 50 rows each,
 *    the log aged 11 minutes between them): the first history pass (list),
 *    a warm list, showing the newest and the oldest version (all 5,000
 *    rows), a diff of the two, a restore of the oldest, and the stored size
 *    of one version.
 * 2. A ~1 MB doc with 100,000 updates of history (single-character edits
 *    by two principals, one every 100 ms of log time, so about 2.8 hours
 *    of sessions) written straight to the durable log: the first history
 *    pass over the 100,000 updates, a warm list, showing a version as
 *    Markdown and as ProseMirror JSON, a diff, and a restore.
 *
 *   npx tsx bench/versions.ts
 *   npx tsx bench/versions.ts --updates 20000   (a shorter history, for a quick look)
 *
 * `runVersionsBench()` returns the same figures for bench/run.ts.
 */
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import * as Y from 'yjs';
import { docToMarkdown, markdownToDoc } from '../src/model/doc/markdown';
import { appendUpdates } from '../src/persistence/document-log';
import { readDocBody, replaceDocBody } from '../src/model/doc/body';
import { serverOrigin } from '../src/sync/origins';
import { insertRows } from '../src/model/table/document';
import { startTestApp, type TestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../test/workspaces/helpers';
import { makeMarkdown } from './doc';

type Figures = Record<string, number | string>;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

/** Median of `times` runs, in ms. */
async function medianMs(times: number, run: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push((await timed(run)).ms);
  return round(median(samples));
}

async function ok(t: TestApp, method: string, path: string, options: Parameters<TestApp['request']>[2]) {
  const res = await t.request(method, path, options);
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res;
}

async function ageLog(t: TestApp, document: string, minutes: number) {
  await sql`update document_updates set created_at = created_at - make_interval(mins => ${minutes}) where document = ${document}`.execute(t.services.db);
}

async function storedSize(t: TestApp, versionId: string): Promise<{ json: number; stored: number }> {
  const row = await sql<{ json: number; stored: number }>`select content_bytes as json, octet_length(content) as stored from surface_versions where id = ${versionId}`.execute(t.services.db);
  return { json: Number(row.rows[0]!.json), stored: Number(row.rows[0]!.stored) };
}

// ------------------------------------------------------------------ sheet

async function sheetFigures(t: TestApp, ada: TestUser, rows = 5_000, sessions = 10): Promise<Figures> {
  const ws = await createWorkspace(t, ada, { name: 'Bench sheet', slug: 'bench-sheet' });
  const base = '/api/workspaces/bench-sheet';
  const surfaceId = ws.primarySurface.id as string;
  const document = ws.primarySurface.syncDocument as string;
  const principal = { principalType: 'user' as const, id: ada.userId, name: 'ada', avatarUrl: null };
  const ids = Array.from({ length: rows }, (_, n) => `r${n.toString(36).padStart(5, '0')}`);
  await t.services.sync.transact(document, serverOrigin(principal, 'system'), (doc) => {
    insertRows(
      doc,
      ids.map((id, n) => ({ id, surfaceId, data: { title: `Task number ${n} for the bench`, status: 'todo', notes: `Some notes about row ${n}, long enough to look like real text in a cell.` } })),
      null,
    );
  });
  for (let s = 0; s < sessions; s++) {
    await ageLog(t, document, 11);
    const updates = Array.from({ length: 50 }, (_, i) => ({ id: ids[(s * 487 + i * 97) % rows]!, data: { status: s % 2 === 0 ? 'doing' : 'done', notes: `Session ${s} note ${i}` } }));
    await ok(t, 'PATCH', `${base}/rows/bulk`, { as: ada.as, body: { updates } });
  }

  const first = await timed(() => ok(t, 'GET', `${base}/surfaces/table/versions?limit=200`, { as: ada.as }));
  const list = first.value.body.versions as Array<{ id: string }>;
  const newest = list[0]!.id;
  const oldest = list.at(-1)!.id;
  const shown = await ok(t, 'GET', `${base}/surfaces/table/versions/${newest}?limit=${rows}`, { as: ada.as });
  if (shown.body.rows.length !== rows) throw new Error(`the newest version shows ${shown.body.rows.length} rows`);
  const size = await storedSize(t, newest);
  const figures: Figures = {
    'sheet: rows': rows,
    'sheet: versions listed': list.length,
    'sheet: first list (history pass over the log), ms': round(first.ms),
    'sheet: list, warm, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/table/versions`, { as: ada.as })),
    'sheet: show the newest version, 5,000 rows, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/table/versions/${newest}?limit=${rows}`, { as: ada.as })),
    'sheet: show the oldest version, 5,000 rows, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/table/versions/${oldest}?limit=${rows}`, { as: ada.as })),
    'sheet: diff oldest -> newest, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/table/versions/${oldest}/diff?to=${newest}`, { as: ada.as })),
    'sheet: one version, JSON KB': round(size.json / 1024),
    'sheet: one version, stored (gzip) KB': round(size.stored / 1024),
  };
  const restore = await timed(() => ok(t, 'POST', `${base}/surfaces/table/versions/${oldest}/restore`, { as: ada.as }));
  figures['sheet: restore the oldest version, ms'] = round(restore.ms);
  return figures;
}

// ------------------------------------------------------------------ doc

/** The top-level paragraphs' text nodes of a body, to type into (the documented layout: Y.XmlFragment `default`). */
function paragraphTexts(doc: Y.Doc): Y.XmlText[] {
  const texts: Y.XmlText[] = [];
  for (const block of doc.getXmlFragment('default').toArray()) {
    if (block instanceof Y.XmlElement && block.nodeName === 'paragraph' && block.get(0) instanceof Y.XmlText) texts.push(block.get(0) as Y.XmlText);
  }
  return texts;
}

async function docFigures(t: TestApp, ada: TestUser, updates = 100_000): Promise<Figures> {
  const ws = await createWorkspace(t, ada, { name: 'Bench doc', slug: 'bench-doc' });
  const agent = await insertKey(t, ada, { role: 'editor', scopeWorkspaceId: ws.id, agentName: 'typist' });
  const base = '/api/workspaces/bench-doc';
  const surface = await ok(t, 'POST', `${base}/surfaces`, { as: ada.as, body: { kind: 'doc', slug: 'big', name: 'Big' } });
  const document = surface.body.syncDocument as string;

  // The history, made on a local replica and written straight to the durable log (the engine has not opened the document).
  const writer = new Y.Doc();
  const log: Uint8Array[] = [];
  writer.on('update', (u: Uint8Array) => log.push(u));
  replaceDocBody(writer, markdownToDoc(makeMarkdown(1_000_000)), null);
  const texts = paragraphTexts(writer);
  for (let i = 0; i < updates - 1; i++) {
    const text = texts[(i * 7919) % texts.length]!;
    text.insert(Math.min(text.length, (i * 31) % 40), 'abcdefghij'[i % 10]!);
  }
  const authors = [{ principalType: 'user' as const, id: ada.userId }, { principalType: 'agent' as const, id: agent.agentId }];
  await appendUpdates(
    t.services.db,
    log.map((update, i) => ({ document, update, author: authors[Math.floor(i / 3000) % 2]!, derived: true })),
  );
  // One update every 100 ms of log time, ending now; each principal types in stretches of 3,000 updates (5 minutes).
  await sql`update document_updates set created_at = now() - ((select max(seq) from document_updates where document = ${document}) - seq) * interval '100 milliseconds' where document = ${document}`.execute(t.services.db);
  const expected = docToMarkdown(readDocBody(writer));
  const bodyBytes = Buffer.byteLength(expected);
  writer.destroy();

  const first = await timed(() => ok(t, 'GET', `${base}/surfaces/big/versions?limit=200`, { as: ada.as }));
  const list = first.value.body.versions as Array<{ id: string }>;
  const newest = list[0]!.id;
  const oldest = list.at(-1)!.id;
  const shown = await ok(t, 'GET', `${base}/surfaces/big/versions/${newest}?format=markdown`, { as: ada.as });
  if (shown.body.markdown !== expected) throw new Error('the newest version is not the body as written');
  const size = await storedSize(t, newest);
  const figures: Figures = {
    'doc: body, Markdown KB': round(bodyBytes / 1024),
    'doc: updates in the log': log.length,
    'doc: versions listed': list.length,
    'doc: first list (history pass over every update), ms': round(first.ms),
    'doc: list, warm, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/big/versions`, { as: ada.as })),
    'doc: show the newest version as Markdown, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/big/versions/${newest}?format=markdown`, { as: ada.as })),
    'doc: show the oldest version as ProseMirror JSON, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/big/versions/${oldest}`, { as: ada.as })),
    'doc: diff oldest -> newest, ms (median of 5)': await medianMs(5, () => ok(t, 'GET', `${base}/surfaces/big/versions/${oldest}/diff?to=${newest}`, { as: ada.as })),
    'doc: one version, JSON KB': round(size.json / 1024),
    'doc: one version, stored (gzip) KB': round(size.stored / 1024),
  };
  const restore = await timed(() => ok(t, 'POST', `${base}/surfaces/big/versions/${oldest}/restore`, { as: ada.as }));
  figures['doc: restore the oldest version (engine loads the log first), ms'] = round(restore.ms);
  const compaction = await timed(() => t.services.sync.compactNow(document));
  figures['doc: compaction after it (history pass first), ms'] = round(compaction.ms);
  return figures;
}

export async function runVersionsBench(options: { updates?: number } = {}): Promise<Figures> {
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const ada = await signInUser(t, 'ada@example.com');
    return { ...(await sheetFigures(t, ada)), ...(await docFigures(t, ada, options.updates)) };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--updates');
  await prepareTemplate();
  const figures = await runVersionsBench({ updates: at > 0 ? Number(process.argv[at + 1]) : undefined });
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(70)} ${value}`);
  process.exit(0);
}
