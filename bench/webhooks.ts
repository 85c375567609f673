/**
 * Webhooks (issue 13): REST row writes through the outbox to a receiver on
 * loopback. The server runs in its own process; the load and the receiver
 * share this one. Figures: the cost of the outbox on the write path,
 * delivery latency from commit to the receiver, and sustained events per
 * second from REST writes to delivered webhooks. Asserts nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { spawnBenchServer } from './spawn-server';

type Figures = Record<string, number | string>;
type ServerInfo = { url: string; cookie: string; orgSlug: string; database: string };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Answers 200 at once and notes when each event arrived. */
async function startReceiver() {
  const arrivals = new Map<string, { at: number; ts: string }>();
  let count = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const at = Date.now();
      count++;
      const record = JSON.parse(body) as { ts: string; data: { id: string } };
      if (!arrivals.has(record.data.id)) arrivals.set(record.data.id, { at, ts: record.ts });
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    requests: () => count,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function waitFor(check: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for deliveries');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function runWebhooksBench(): Promise<Figures> {
  const { info, child } = await spawnBenchServer<ServerInfo>('webhooks-server.ts', 'trellis', `bench_webhooks_${process.pid}`);
  const receiver = await startReceiver();
  const dispatcher = new Agent({ connections: 10, pipelining: 1 });
  const headers = { 'content-type': 'application/json', cookie: `svc-session=${info.cookie}` };
  const rowsUrl = `${info.url}/api/workspaces/welcome/rows`;
  const post = async (title: string) => {
    const res = await request(rowsUrl, { method: 'POST', headers, body: JSON.stringify({ data: { title } }), dispatcher });
    return (await res.body.json()) as { id: string };
  };
  const sequentialCreates = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      await post(`seq ${i}`);
      times.push(performance.now() - start);
    }
    return times.sort((a, b) => a - b);
  };
  try {
    for (let i = 0; i < 50; i++) await post(`warm ${i}`);
    const without = await sequentialCreates(300);

    const subscribe = async (path: string) => {
      const res = await request(`${info.url}/api/orgs/${info.orgSlug}/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: `${receiver.url}${path}`, events: ['row.created'] }),
        dispatcher,
      });
      if (res.statusCode !== 200) throw new Error(`subscribe answered ${res.statusCode}: ${await res.body.text()}`);
      await res.body.text();
    };
    await subscribe('/one');

    // Latency: one write at a time, from the event's commit timestamp to its arrival at the receiver.
    const created: string[] = [];
    const restTimes: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = performance.now();
      created.push((await post(`latency ${i}`)).id);
      restTimes.push(performance.now() - start);
      await waitFor(() => receiver.arrivals.has(created.at(-1)!), 30_000);
    }
    restTimes.sort((a, b) => a - b);
    const latency = created.map((id) => receiver.arrivals.get(id)!).map((a) => a.at - Date.parse(a.ts)).sort((a, b) => a - b);

    // Throughput: 10 connections write for 5 s; events per second until the last one is delivered.
    const before = receiver.requests();
    const ids: string[] = [];
    const started = performance.now();
    const deadline = started + 5_000;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < deadline) ids.push((await post('load')).id);
      }),
    );
    const writesDone = performance.now();
    await waitFor(() => ids.every((id) => receiver.arrivals.has(id)), 120_000);
    const delivered = performance.now();

    // Fan-out: three more subscriptions, so each write is four deliveries.
    for (const path of ['/two', '/three', '/four']) await subscribe(path);
    const fanIds: string[] = [];
    const fanRequestsBefore = receiver.requests();
    const fanStart = performance.now();
    const fanDeadline = fanStart + 5_000;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < fanDeadline) fanIds.push((await post('fan')).id);
      }),
    );
    await waitFor(() => receiver.requests() - fanRequestsBefore >= fanIds.length * 4, 120_000);
    const fanDone = performance.now();

    return {
      'REST create p50 ms, no webhooks': round(percentile(without, 50)),
      'REST create p99 ms, no webhooks': round(percentile(without, 99)),
      'REST create p50 ms, one webhook': round(percentile(restTimes, 50)),
      'REST create p99 ms, one webhook': round(percentile(restTimes, 99)),
      'delivery latency p50 ms (commit → receiver)': percentile(latency, 50),
      'delivery latency p99 ms (commit → receiver)': percentile(latency, 99),
      'writes in 5 s with one webhook (10 conns)': ids.length,
      'REST writes/s with one webhook': Math.round(ids.length / ((writesDone - started) / 1000)),
      'events/s delivered, REST → outbox → receiver': Math.round(ids.length / ((delivered - started) / 1000)),
      'backlog after the writes stopped, ms': Math.round(delivered - writesDone),
      'deliveries/s with four webhooks (each write × 4)': Math.round((receiver.requests() - fanRequestsBefore) / ((fanDone - fanStart) / 1000)),
      'receiver requests in all': receiver.requests() - before + created.length,
      database: info.database,
    };
  } finally {
    await dispatcher.close();
    await receiver.close();
    child.kill('SIGKILL');
  }
}
