import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { writeFramesPerTurn } from '../../src/sync/turn-writes';

/**
 * A connection's frames of one turn leave in one write (src/sync/turn-writes.ts):
 * a real ws server and client on loopback, the server socket's writes counted.
 */
let server: Server | undefined;
let client: WebSocket | undefined;

afterEach(async () => {
  client?.terminate();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = client = undefined;
});

/** A server whose one connection is handed to `serve` with its socket's write calls counted. */
async function connection(serve: (ws: WebSocket, writes: () => number, socket: Duplex) => void): Promise<WebSocket> {
  const wss = new WebSocketServer({ noServer: true });
  server = createServer();
  server.on('upgrade', (request, socket, head) => {
    let writes = 0;
    const counted = socket as Duplex & { _write: (...args: unknown[]) => void; _writev?: (...args: unknown[]) => void };
    const write = counted._write.bind(socket);
    counted._write = (...args: unknown[]) => {
      writes++;
      write(...args);
    };
    if (counted._writev) {
      const writev = counted._writev.bind(socket);
      counted._writev = (...args: unknown[]) => {
        writes++;
        writev(...args);
      };
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, () => writes, socket));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return client;
}

function received(ws: WebSocket, count: number): Promise<string[]> {
  const messages: string[] = [];
  return new Promise((resolve) =>
    ws.on('message', (data) => {
      messages.push(data.toString());
      if (messages.length === count) resolve(messages);
    }),
  );
}

describe('frames sent to a sync connection', () => {
  it('leave in one write a turn, in the order sent, and a later turn’s frames in their own', async () => {
    const writesPerTurn: number[] = [];
    let counted!: () => void;
    const bothCounted = new Promise<void>((resolve) => (counted = resolve));
    const ws = await connection((serverSide, writes, socket) => {
      writeFramesPerTurn(serverSide, socket);
      let before = writes();
      for (let i = 0; i < 100; i++) serverSide.send(`frame ${i}`);
      setImmediate(() => {
        writesPerTurn.push(writes() - before);
        before = writes();
        // The next turn: frames sent one after another from awaited promises (as acknowledgements go out after a commit).
        void (async () => {
          for (let i = 100; i < 150; i++) {
            await Promise.resolve();
            serverSide.send(`frame ${i}`);
          }
          setImmediate(() => {
            writesPerTurn.push(writes() - before);
            counted();
          });
        })();
      });
    });
    const messages = await received(ws, 150);
    expect(messages).toEqual(Array.from({ length: 150 }, (_, i) => `frame ${i}`));
    await bothCounted;
    expect(writesPerTurn).toEqual([1, 1]);
  });

  it('still closes cleanly, the frames before the close delivered', async () => {
    const ws = await connection((serverSide, _writes, socket) => {
      writeFramesPerTurn(serverSide, socket);
      serverSide.send('last words');
      serverSide.close(4000, 'bye');
    });
    const closed = new Promise<[number, string]>((resolve) => ws.on('close', (code, reason) => resolve([code, reason.toString()])));
    expect(await received(ws, 1)).toEqual(['last words']);
    expect(await closed).toEqual([4000, 'bye']);
  });

  it('leave before the connection is terminated in the same turn (shutdown closes, then terminates)', async () => {
    const ws = await connection((serverSide, _writes, socket) => {
      writeFramesPerTurn(serverSide, socket);
      serverSide.send('last words');
      serverSide.close(1001, 'shutting down');
      serverSide.terminate();
    });
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(data.toString()));
    const closed = await new Promise<[number, string]>((resolve) => ws.on('close', (code, reason) => resolve([code, reason.toString()])));
    expect({ messages, closed }).toEqual({ messages: ['last words'], closed: [1001, 'shutting down'] });
  });
});
