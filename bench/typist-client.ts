/**
 * The typist of `npm run bench -- write-path` (issue 38, goal 3), in a
 * process of its own: one sync client typing the trace into a doc workspace
 * of a Trellis bench server, a transaction a patch, at most `TYPIST_AHEAD`
 * keystrokes unacknowledged. The bench's REST connections and this client's
 * Yjs work used to share one event loop, whose delay (up to 1.2 s) then
 * counted in the REST latency measured beside the typist; here they share
 * only the load core.
 *
 * Spoken to over the IPC channel of `fork`:
 *   parent -> { url, session, rate? }  create the workspace, connect, sync, start typing
 *                                 (`rate` keystrokes a second at most; without it, as fast as the
 *                                 acknowledgements allow);
 *   child  -> { ready: true }     typing has started;
 *   parent -> { stop: true }      stop typing, wait for every acknowledgement;
 *   child  -> TypistReport        then exits.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { connectClient, eventually } from '../test/helpers/sync';
import { loadTrace, traceParagraph } from './doc';

/** Keystrokes a typist may have sent and not yet had acknowledged: a fast, steady typist rather than a firehose. */
export const TYPIST_AHEAD = 200;

export type TypistReport = {
  typed: number;
  /** From the first keystroke to the last acknowledgement. */
  typingMs: number;
  /** Each keystroke's time from its transaction to its acknowledgement (ms): it waits behind up to TYPIST_AHEAD others. */
  ackP50: number;
  ackP99: number;
  ackMax: number;
  /** This process's own event-loop delay while typing (ms). */
  loopP50: number;
  loopP99: number;
  loopMax: number;
};

const percentile = (sorted: Float64Array, p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);

async function type(url: string, session: string, rate: number | undefined): Promise<void> {
  const trace = loadTrace();
  const headers = { 'content-type': 'application/json', cookie: session };
  const created = await fetch(`${url}/api/workspaces`, { method: 'POST', headers, body: JSON.stringify({ name: 'typist', slug: 'typist', mode: 'doc' }) });
  if (created.status !== 200) throw new Error(`POST /api/workspaces answered ${created.status}: ${await created.text()}`);
  const { primarySurface } = (await created.json()) as { primarySurface: { syncDocument: string } };
  const client = connectClient(url, primarySurface.syncDocument, { cookie: session.replace(/^svc-session=/, '') });
  const text = await traceParagraph(client, trace);

  const total = trace.txns.reduce((n, txn) => n + txn.patches.length, 0);
  const sentAt = new Float64Array(total);
  const latencies = new Float64Array(total);
  let sent = 0;
  let acked = 0;
  // Acknowledgements come in the order the updates were sent: each drop of the count acknowledges the oldest.
  client.provider.on('unsyncedChanges', ({ number }: { number: number }) => {
    const now = performance.now();
    for (const upTo = sent - number; acked < upTo; acked++) latencies[acked] = now - sentAt[acked]!;
  });

  let stopped = false;
  process.once('message', () => (stopped = true));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  process.send!({ ready: true });
  outer: for (const txn of trace.txns) {
    for (const [pos, del, ins] of txn.patches) {
      if (stopped) break outer;
      while (client.provider.unsyncedChanges >= TYPIST_AHEAD && !stopped) await new Promise((resolve) => setTimeout(resolve, 1));
      if (stopped) break outer;
      // Paced: keystroke n is due at n / rate seconds after the start; one behind its time goes at once.
      if (rate !== undefined) {
        const due = started + (sent * 1000) / rate;
        while (!stopped && performance.now() < due) await new Promise((resolve) => setTimeout(resolve, Math.max(1, due - performance.now())));
        if (stopped) break outer;
      }
      sentAt[sent] = performance.now();
      sent++;
      client.doc.transact(() => {
        if (del > 0) text.delete(pos, del);
        if (ins) text.insert(pos, ins);
      });
    }
  }
  while (!stopped) await new Promise((resolve) => setTimeout(resolve, 5));
  delay.disable();
  await eventually(() => client.provider.unsyncedChanges === 0, 600_000, 5);
  const typingMs = performance.now() - started;
  client.destroy();
  const sorted = latencies.slice(0, acked).sort();
  const report: TypistReport = {
    typed: sent,
    typingMs,
    ackP50: percentile(sorted, 50),
    ackP99: percentile(sorted, 99),
    ackMax: sorted.at(-1) ?? 0,
    loopP50: delay.percentile(50) / 1e6,
    loopP99: delay.percentile(99) / 1e6,
    loopMax: delay.max / 1e6,
  };
  process.send!(report, () => process.exit(0));
}

// Only as the script of its own process (write-path.ts imports this module's constant and type).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // A bench that ended (or died) without `stop` leaves no typist behind.
  process.once('disconnect', () => process.exit(0));
  process.once('message', (message: { url: string; session: string; rate?: number }) => {
    type(message.url, message.session, message.rate).catch((error) => {
      console.error(error);
      process.exit(1);
    });
  });
}
