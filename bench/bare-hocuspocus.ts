import type http from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { WebSocketServer } from 'ws';

const settled: Promise<void> = Promise.resolve();

/**
 * Serves a bare Hocuspocus's websockets on `server` with the same wiring the
 * engine uses (and nothing else), listening on a free local port; resolves
 * with the base URL. The baseline of the sync benchmarks. `beforeApply`:
 * what a message must wait for before Hocuspocus applies (and so
 * acknowledges) it, or null (bench/durable-floor.ts).
 */
export async function listenBare(
  hocuspocus: Hocuspocus,
  server: http.Server,
  options: { maxPayload?: number; beforeApply?: (message: Uint8Array) => Promise<void> | null } = {},
): Promise<string> {
  const { beforeApply, ...wsOptions } = options;
  const wss = new WebSocketServer({ noServer: true, ...wsOptions });
  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      const client = hocuspocus.handleConnection(ws as never, new Request(`http://localhost${request.url}`));
      // `beforeApply` (the durable floor) starts as each message arrives; messages still reach Hocuspocus in arrival order.
      let applied: Promise<void> = Promise.resolve();
      ws.on('message', (data: Buffer) => {
        const message = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        const ready = beforeApply?.(message);
        if (!ready && applied === settled) return client.handleMessage(message);
        const turn = applied.then(() => ready).then(() => client.handleMessage(message));
        applied = turn;
        void turn.then(() => {
          if (applied === turn) applied = settled;
        });
      });
      ws.on('close', (code, reason) => client.handleClose({ code, reason: reason.toString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
