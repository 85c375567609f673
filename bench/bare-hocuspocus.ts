import type http from 'node:http';
import type { Hocuspocus } from '@hocuspocus/server';
import { WebSocketServer } from 'ws';

/**
 * Serves a bare Hocuspocus's websockets on `server` with the same wiring the
 * engine uses (and nothing else), listening on a free local port; resolves
 * with the base URL. The baseline of the sync benchmarks.
 */
export async function listenBare(hocuspocus: Hocuspocus, server: http.Server, options: { maxPayload?: number } = {}): Promise<string> {
  const wss = new WebSocketServer({ noServer: true, ...options });
  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      const client = hocuspocus.handleConnection(ws as never, new Request(`http://localhost${request.url}`));
      ws.on('message', (data: Buffer) => client.handleMessage(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
      ws.on('close', (code, reason) => client.handleClose({ code, reason: reason.toString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
