/**
 * Comment figures (issue 9), through the real app on PGlite: creating
 * comments on a row and on a range of a ~200 KB doc, listing a page of 200
 * doc-range comments (every anchor resolved in the current document, drift
 * checked), and a new thread that wakes an agent (dedup claim, meter count,
 * inbox insert). Prints figures; asserts nothing but success.
 *
 *   npx tsx bench/comments.ts
 */
import { pathToFileURL } from 'node:url';
import { docSchema } from '../src/model/doc/schema';
import { startTestApp, type TestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { makeMarkdown } from './doc';

type Figures = Record<string, number | string>;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function ok(t: TestApp, method: string, path: string, options: Parameters<TestApp['request']>[2]) {
  const res = await t.request(method, path, options);
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body;
}

async function timed(n: number, run: (i: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await run(i);
    times.push(performance.now() - start);
  }
  return times;
}

/** Text positions of every word in the body as GET /doc returns it. */
function wordRanges(content: unknown): Array<{ from: number; to: number; text: string }> {
  const ranges: Array<{ from: number; to: number; text: string }> = [];
  docSchema.nodeFromJSON(content).descendants((node, pos) => {
    if (!node.isText) return true;
    for (const match of node.text!.matchAll(/[a-z]{4,}/g)) ranges.push({ from: pos + match.index, to: pos + match.index + match[0].length, text: match[0] });
    return false;
  });
  return ranges;
}

export async function runCommentsBench(): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp({ env: { API_WRITES_PER_MINUTE: '1000000' } });
  try {
    const { cookie } = await signIn(t, 'bench@example.com');
    const as = { cookie };
    const markdown = makeMarkdown(200_000);
    await ok(t, 'POST', '/api/workspaces', { as, body: { name: 'Bench', slug: 'bench', mode: 'doc', initialMarkdown: markdown } });
    await ok(t, 'POST', '/api/workspaces/bench/surfaces', { as, body: { kind: 'table', slug: 'sheet', name: 'Sheet' } });
    const rowIds: string[] = [];
    for (let i = 0; i < 60; i++) rowIds.push((await ok(t, 'POST', '/api/workspaces/bench/rows', { as, body: { data: { title: `row ${i}` } } })).id);
    const content = (await ok(t, 'GET', '/api/workspaces/bench/doc', { as })).content;
    const words = wordRanges(content);
    const pick = (i: number) => words[Math.floor((i * words.length) / 200)]!;

    const rowTimes = await timed(50, (i) => ok(t, 'POST', '/api/workspaces/bench/comments', { as, body: { target: { type: 'row', rowId: rowIds[i] }, body: `Row comment ${i}` } }));
    const rangeTimes = await timed(200, (i) =>
      ok(t, 'POST', '/api/workspaces/bench/comments', { as, body: { target: { type: 'doc_range', surfaceSlug: 'doc', anchor: pick(i) }, body: `About "${pick(i).text}"` } }),
    );
    const listTimes = await timed(20, async () => {
      const page = await ok(t, 'GET', '/api/workspaces/bench/comments?target_type=doc_range&limit=200', { as });
      if (page.comments.length !== 200 || page.comments.some((c: { currentText?: string }) => c.currentText !== undefined)) throw new Error('unexpected page');
    });

    // An agent that can read the workspace, mentioned by new threads on distinct rows (no dedup).
    await ok(t, 'POST', '/api/me/elevate', { as, body: { scope: 'keys' } });
    const minted = await ok(t, 'POST', '/api/keys', { as, body: { name: 'bench', agentName: 'scribe', role: 'editor' } });
    const mention = [{ kind: 'agent', id: minted.key.agent.id, label: 'scribe' }];
    const wakeTimes = await timed(50, async (i) => {
      const made = await ok(t, 'POST', '/api/workspaces/bench/comments', { as, body: { target: { type: 'cell', rowId: rowIds[i + 10], columnKey: 'title' }, body: '@scribe look', mentions: mention } });
      if (made.wakes[0]?.status !== 'delivered') throw new Error(`wake ${JSON.stringify(made.wakes)}`);
    });
    const inboxTimes = await timed(20, () => ok(t, 'GET', '/api/me/messages?limit=50', { as: { bearer: minted.secret } }));

    return {
      'doc body (Markdown bytes / ProseMirror size)': `${markdown.length} / ${docSchema.nodeFromJSON(content).content.size}`,
      'POST row comment, p50 ms (50)': round(median(rowTimes)),
      'POST doc_range comment, p50 ms (200, anchored in the live doc)': round(median(rangeTimes)),
      'GET 200 doc_range comments, p50 ms (20; anchors resolved, drift checked)': round(median(listTimes)),
      'POST cell comment waking an agent, p50 ms (50; delivered)': round(median(wakeTimes)),
      'GET /api/me/messages (50 messages), p50 ms (20)': round(median(inboxTimes)),
    };
  } finally {
    await t.close();
    await t.store.dispose();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  for (const [key, value] of Object.entries(await runCommentsBench())) console.log(`${key.padEnd(70)} ${value}`);
  process.exit(0);
}
