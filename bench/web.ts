/**
 * The web app: bundle sizes (raw, gzip, brotli) of the built assets, and the
 * table grid in headless Chromium: how long a 5,000-row table takes to show,
 * and frames per second while it scrolls (requestAnimationFrame steps of
 * ROW_STEP px, as a fast trackpad scroll would).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { insertRows, createTableId } from '../src/model/table/document';
import { serverOrigin } from '../src/sync/origins';
import { startTestApp } from '../test/helpers/app';
import { prepareTemplate } from '../test/helpers/database';
import { signIn } from '../test/helpers/sign-in';
import { chromium } from 'playwright-core';
import { buildWeb, WEB_DIST } from '../web/build';

type Figures = Record<string, number | string>;

const ROWS = 5000;
const SCROLL_SECONDS = 6;
const ROW_STEP = 180;

function kb(bytes: number) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function bundleFigures(): Figures {
  const assets = path.join(WEB_DIST, 'assets');
  const figures: Figures = {};
  const totals = { raw: 0, gzip: 0, brotli: 0 };
  for (const file of readdirSync(assets).filter((name) => /\.(js|css)$/.test(name)).sort()) {
    const bytes = readFileSync(path.join(assets, file));
    const gzip = gzipSync(bytes, { level: 9 }).length;
    const brotli = brotliCompressSync(bytes).length;
    totals.raw += bytes.length;
    totals.gzip += gzip;
    totals.brotli += brotli;
    figures[`bundle ${file.replace(/-[\w-]{8}\./, '.')}`] = `${kb(bytes.length)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli`;
  }
  const latinFont = readdirSync(assets).find((name) => name.includes('latin-wght-normal'));
  figures['bundle total js+css'] = `${kb(totals.raw)} raw, ${kb(totals.gzip)} gzip, ${kb(totals.brotli)} brotli`;
  if (latinFont) figures['font (Inter latin, woff2, loaded once)'] = kb(readFileSync(path.join(assets, latinFont)).length);
  return figures;
}

async function gridFigures(): Promise<Figures> {
  await prepareTemplate();
  const t = await startTestApp();
  // The tests' flags, plus no throttling of frames in a page the headless browser thinks is in the background.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-renderer-backgrounding',
      '--disable-background-timer-throttling',
      '--disable-backgrounding-occluded-windows',
    ],
  });
  try {
    const { cookie, orgSlug } = await signIn(t, 'bench-web@example.com');
    await t.services.db.updateTable('orgs').set({ plan: 'scale' }).execute();
    const workspace = (await t.request('GET', '/api/workspaces/welcome', { as: { cookie } })).body;
    const surfaceId = workspace.primarySurface.id as string;
    const statuses = ['todo', 'doing', 'done'];
    const me = (await t.request('GET', '/api/me', { as: { cookie } })).body.principal;
    for (let start = 0; start < ROWS; start += 500) {
      const batch = Array.from({ length: Math.min(500, ROWS - start) }, (_, i) => ({
        id: createTableId(),
        surfaceId,
        data: { title: `Task ${start + i + 1}: follow up with the customer about the renewal`, status: statuses[(start + i) % 3]!, notes: (start + i) % 4 === 0 ? 'Waiting for the signed order form' : null },
      }));
      await t.services.sync.transact(workspace.primarySurface.syncDocument, serverOrigin(me, 'system'), (doc) => insertRows(doc, batch, 'bench'));
    }

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addCookies([{ name: 'svc-session', value: cookie, url: t.url }]);
    const page = await context.newPage();
    const started = Date.now();
    await page.goto(`${t.url}/${orgSlug}/welcome`);
    await page.waitForFunction((rows) => document.querySelector('[data-testid="row-count"]')?.textContent === `${rows.toLocaleString('en-US')} rows`, ROWS, { timeout: 60_000 });
    const firstShown = Date.now() - started;
    // A second load reads the local copy (IndexedDB) first.
    const reloaded = Date.now();
    await page.reload();
    await page.waitForFunction((rows) => document.querySelector('[data-testid="row-count"]')?.textContent === `${rows.toLocaleString('en-US')} rows`, ROWS, { timeout: 60_000 });
    const secondShown = Date.now() - reloaded;

    // Passed as source text: tsx would wrap named functions in a helper the page does not have.
    const scroll = (await page.evaluate(`new Promise((resolve) => {
      const scroller = document.querySelector('.grid-scroll');
      const gaps = [];
      let last = 0;
      let end = 0;
      let direction = 1;
      let domRows = 0;
      let busy = 0;
      new PerformanceObserver((list) => { for (const entry of list.getEntries()) busy += entry.duration; }).observe({ type: 'longtask' });
      const frame = (now) => {
        gaps.push(now - last);
        last = now;
        if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2) direction = -1;
        else if (scroller.scrollTop <= 0) direction = 1;
        scroller.scrollTop += direction * ${ROW_STEP};
        domRows = Math.max(domRows, scroller.querySelectorAll('.grid-row').length);
        if (now < end) return requestAnimationFrame(frame);
        const sorted = [...gaps].sort((a, b) => a - b);
        resolve({
          frames: gaps.length,
          ms: gaps.reduce((a, b) => a + b, 0),
          p95: sorted[Math.floor(sorted.length * 0.95)],
          worst: sorted[sorted.length - 1],
          slow: gaps.filter((gap) => gap > 20).length,
          domRows,
          longTaskMs: busy,
        });
      };
      requestAnimationFrame((now) => {
        last = now;
        end = now + ${SCROLL_SECONDS * 1000};
        requestAnimationFrame(frame);
      });
    })`)) as { frames: number; ms: number; p95: number; worst: number; slow: number; domRows: number; longTaskMs: number };
    await context.close();
    return {
      'grid rows': ROWS,
      'grid first load (sync from server) ms': firstShown,
      'grid reload (IndexedDB + sync) ms': secondShown,
      [`grid scroll fps (${ROW_STEP} px per frame, ${SCROLL_SECONDS} s)`]: ((scroll.frames / scroll.ms) * 1000).toFixed(1),
      'grid scroll frame time p95 ms': scroll.p95.toFixed(1),
      'grid scroll worst frame ms': scroll.worst.toFixed(1),
      'grid scroll frames over 20 ms': `${scroll.slow} of ${scroll.frames}`,
      'grid rows in the DOM while scrolling (max)': scroll.domRows,
      'grid scroll main-thread long tasks (total ms)': Math.round(scroll.longTaskMs),
    };
  } finally {
    await browser.close();
    await t.close();
  }
}

export async function runWebBench(): Promise<Figures> {
  await buildWeb({ ifStale: true, quiet: true });
  return { ...bundleFigures(), ...(await gridFigures()) };
}
