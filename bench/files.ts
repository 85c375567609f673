/**
 * Files figures (issue 14): a zip of 50 files totalling 400 MB streamed from
 * a server in its own process, while that process's resident memory is
 * sampled (every 20 ms, from /proc) from just before the request until the
 * last byte; and the direct uploads that put those files there, streamed
 * to the one-shot URL of the local store. The zip is read and counted, not
 * kept; its end-of-central-directory record must list 50 entries.
 *
 *   npx tsx bench/files.ts            (50 × 8 MB)
 *   npx tsx bench/files.ts --mb 100   (a smaller total, for a quick look)
 *
 * `runFilesBench()` returns the same figures for bench/run.ts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { spawnBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
type ServerInfo = { url: string; cookie: string; pid: number; base: string };

const MB = 1024 * 1024;
const FILES = 50;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Samples a process's RSS until stopped; returns the peak. */
function sampleRss(pid: number) {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}

/** One file streamed in 1 MB chunks of random bytes (nothing to compress, nothing held). */
function randomBody(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const chunk = randomBytes(Math.min(MB, bytes - sent));
      sent += chunk.byteLength;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
}

export async function runFilesBench(options: { totalMb?: number } = {}): Promise<Figures> {
  const totalMb = options.totalMb ?? 400;
  const fileBytes = Math.floor((totalMb * MB) / FILES);
  const { info, child } = await spawnBenchServer<ServerInfo>('files-server.ts', 'trellis', `bench_files_${process.pid}`);
  try {
    const headers = { cookie: `svc-session=${info.cookie}`, 'content-type': 'application/json' };
    const ids: string[] = [];
    const rssBeforeUploads = rssOf(info.pid);
    const uploadRss = sampleRss(info.pid);
    const uploadStarted = performance.now();
    for (let i = 0; i < FILES; i++) {
      const clientPayload = JSON.stringify({ surfaceSlug: 'files', name: `part-${i}.bin`, size: fileBytes, contentType: 'application/octet-stream' });
      const ticket = await (await fetch(`${info.url}${info.base}`, { method: 'POST', headers, body: JSON.stringify({ clientPayload }) })).json();
      const put = await fetch(ticket.uploadUrl, { method: 'PUT', body: randomBody(fileBytes), headers: ticket.headers, duplex: 'half' } as RequestInit);
      if (!put.ok) throw new Error(`PUT ${put.status}: ${await put.text()}`);
      ids.push((await put.json()).id);
    }
    const uploadSeconds = (performance.now() - uploadStarted) / 1000;
    const uploadPeak = uploadRss.stop();

    const rssBeforeZip = rssOf(info.pid);
    const zipRss = sampleRss(info.pid);
    const zipStarted = performance.now();
    const response = await fetch(`${info.url}${info.base}/zip`, { method: 'POST', headers, body: JSON.stringify({ surfaceSlug: 'files', fileIds: ids }) });
    if (!response.ok) throw new Error(`zip ${response.status}: ${await response.text()}`);
    let zipBytes = 0;
    let tail = Buffer.alloc(0);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      zipBytes += chunk.byteLength;
      tail = Buffer.concat([tail, chunk]).subarray(-64);
    }
    const zipSeconds = (performance.now() - zipStarted) / 1000;
    const zipPeak = zipRss.stop();
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    const entries = eocd >= 0 ? tail.readUInt16LE(eocd + 10) : -1;
    if (entries !== FILES) throw new Error(`the zip lists ${entries} entries, expected ${FILES}`);

    return {
      'files (direct upload, 1 MB chunks of random bytes)': `${FILES} × ${round(fileBytes / MB, 2)} MB = ${round((fileBytes * FILES) / MB)} MB`,
      'direct upload throughput (one at a time)': `${round((fileBytes * FILES) / MB / uploadSeconds)} MB/s`,
      'server RSS before uploads / peak during uploads': `${round(rssBeforeUploads / MB)} / ${round(uploadPeak / MB)} MB`,
      'zip size / entries': `${round(zipBytes / MB)} MB / ${entries}`,
      'zip served in': `${round(zipSeconds, 2)} s (${round(zipBytes / MB / zipSeconds)} MB/s)`,
      'server RSS before zip / peak while streaming': `${round(rssBeforeZip / MB)} / ${round(zipPeak / MB)} MB`,
      'server RSS growth while streaming the zip (goal < 100 MB)': `${round((zipPeak - rssBeforeZip) / MB)} MB`,
    };
  } finally {
    child.kill('SIGKILL');
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const mbFlag = process.argv.indexOf('--mb');
  const figures = await runFilesBench({ totalMb: mbFlag > 0 ? Number(process.argv[mbFlag + 1]) : undefined });
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(58)} ${value}`);
  process.exit(0);
}
