import type { AddressInfo } from 'node:net';
import * as decoding from 'lib0/decoding';
import WebSocket, { WebSocketServer } from 'ws';

export type Direction = 'toServer' | 'toClient';

/**
 * A WebSocket proxy in front of `/api/sync` that forwards Hocuspocus
 * messages frame by frame and can lose chosen ones on the way, the way a
 * broken middlebox or a bug would: the sender believes it sent them.
 */
export type SyncProxy = {
  url: string;
  /** Loses the next Yjs update message (sync step 2 or update) going that way. */
  dropNextUpdate(direction: Direction): Promise<void>;
  dropped: number;
  close(): Promise<void>;
};

export async function startSyncProxy(targetUrl: string): Promise<SyncProxy> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const pendingDrops: Record<Direction, Array<() => void>> = { toServer: [], toClient: [] };
  const proxy: SyncProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropped: 0,
    dropNextUpdate: (direction) => new Promise<void>((resolve) => pendingDrops[direction].push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
  const forward = (direction: Direction, to: WebSocket, data: Buffer) => {
    if (pendingDrops[direction].length > 0 && isYjsUpdate(data)) {
      proxy.dropped++;
      pendingDrops[direction].shift()!();
      return;
    }
    to.send(data);
  };
  server.on('connection', (client, request) => {
    const headers: Record<string, string> = {};
    if (request.headers.cookie) headers.cookie = request.headers.cookie;
    const upstream = new WebSocket(targetUrl.replace(/^http/, 'ws') + (request.url ?? '/api/sync'), { headers });
    const early: Buffer[] = [];
    client.on('message', (data: Buffer) => (upstream.readyState === WebSocket.OPEN ? forward('toServer', upstream, data) : early.push(data)));
    upstream.on('open', () => {
      for (const data of early.splice(0)) forward('toServer', upstream, data);
    });
    upstream.on('message', (data: Buffer) => forward('toClient', client, data));
    upstream.on('close', (code, reason) => client.readyState === WebSocket.OPEN && client.close(code, reason));
    client.on('close', () => upstream.close());
    upstream.on('error', () => client.terminate());
    client.on('error', () => upstream.terminate());
  });
  return proxy;
}

/** A Hocuspocus sync message (type 0) carrying Yjs content: sync step 2 (1) or an update (2). */
function isYjsUpdate(data: Buffer): boolean {
  try {
    const decoder = decoding.createDecoder(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    decoding.readVarString(decoder);
    if (decoding.readVarUint(decoder) !== 0) return false;
    const syncType = decoding.readVarUint(decoder);
    return syncType === 1 || syncType === 2;
  } catch {
    return false;
  }
}
