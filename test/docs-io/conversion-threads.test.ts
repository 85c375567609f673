import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Word and PDF conversions of a large doc run off the serving thread
 * (src/files/doc-conversions.ts): while the server reads or writes a big
 * Word file, it keeps answering other requests. The server runs in this
 * process, so the event loop measured here is the server's: before the
 * conversions moved to worker threads, this doc's Word import held it for
 * seconds (mammoth and the `docx` packer are synchronous): one stall was
 * half of the whole request's time, and no health request was answered
 * meanwhile. Now what stays on the serving thread (reading and writing the
 * doc's live document) is a small share. The bound is that share, not a
 * time: the shared machine's load stretches the stalls and the conversion
 * alike (measured at a load of 12 to 14: before 50% and 58%, after 4% to
 * 12%), so a quarter of the request's time separates them at any load.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let ada: TestUser;
const base = '/api/workspaces/big';

/** About `bytes` of Markdown of the kinds a long report holds. */
function longMarkdown(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block =
      i % 20 === 0
        ? `## Section ${i}\n\n`
        : i % 7 === 0
          ? `- point ${i} with **bold**\n  - nested ${i}\n\n`
          : `Paragraph ${i}: the quick brown fox jumps over the lazy dog, with a [link](https://example.com/${i}), **strong words**, кириллица and 中文.\n\n`;
    parts.push(block);
    size += Buffer.byteLength(block);
  }
  return parts.join('');
}

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@conversion-threads.test');
  await createWorkspace(t, ada, { name: 'Big', slug: 'big', mode: 'doc', initialMarkdown: longMarkdown(300_000) });
  await createWorkspace(t, ada, { name: 'Bigger', slug: 'bigger', mode: 'doc', initialMarkdown: longMarkdown(1_000_000) });
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

/** Runs `conversion` while health requests go one after another; the longest event-loop stall as a share of the conversion's time, and how many were answered meanwhile. */
async function whileServing<T>(conversion: () => Promise<T>): Promise<{ result: T; stallShare: number; healthAnswered: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let converting = true;
  let healthAnswered = 0;
  const health = (async () => {
    while (converting) {
      const response = await fetch(`${t.url}/api/health`);
      await response.arrayBuffer();
      if (converting && response.status === 200) healthAnswered += 1;
    }
  })();
  delay.enable();
  const started = performance.now();
  try {
    const result = await conversion();
    return { result, stallShare: delay.max / 1e6 / (performance.now() - started), healthAnswered };
  } finally {
    delay.disable();
    converting = false;
    await health;
  }
}

describe('a large doc converted to and from Word', () => {
  const download = async (workspace: string) => {
    const response = await fetch(`${t.url}/api/workspaces/${workspace}/doc?format=docx`, { headers: { cookie: `svc-session=${ada.cookie}` } });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it('keeps the server answering while it writes the Word file of a 1 MB doc', async () => {
    const { result, stallShare, healthAnswered } = await whileServing(() => download('bigger'));
    expect(result.status).toBe(200);
    expect(result.bytes.subarray(0, 2).toString()).toBe('PK');
    expect(healthAnswered).toBeGreaterThan(0);
    expect(stallShare).toBeLessThan(0.25);
  });

  it('keeps the server answering while it reads a 300 KB doc\'s Word file, and the doc comes back whole', async () => {
    const word = (await download('big')).bytes;
    const { result, stallShare, healthAnswered } = await whileServing(async () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(word)]), 'big.docx');
      const response = await fetch(`${t.url}${base}/doc/import?mode=new`, { method: 'POST', body: form, headers: { cookie: `svc-session=${ada.cookie}` } });
      return { status: response.status, body: await response.json() };
    });
    expect(result.status).toBe(200);
    expect(healthAnswered).toBeGreaterThan(0);
    expect(stallShare).toBeLessThan(0.25);
    const markdown = (await t.request('GET', `${base}/doc?format=markdown&surface=${result.body.surface.slug}`, { as: ada.as })).body.markdown as string;
    expect(markdown).toContain('Paragraph 1: the quick brown fox');
    expect(markdown).toContain('## Section 20');
  });
});
