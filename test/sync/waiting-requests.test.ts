import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLoopTurns } from '../../src/lib/event-loop-turns';
import { WaitingRequests } from '../../src/sync/waiting-requests';
import { eventually } from '../helpers/sync';

/**
 * A sync client sending hundreds of updates ahead keeps the engine's queued
 * messages coming slice after slice (src/sync/engine.ts). While an HTTP
 * request waits for its answer the slices are shorter, so each step of the
 * request resumes sooner. Counted on a clock the test moves, not in time.
 */
describe('turns of queued sync messages while an HTTP request waits', () => {
  it('a turn is long after the full budget when nothing waits, after the short one when a request waits', () => {
    let now = 0;
    let waiting = false;
    const turns = new EventLoopTurns(10, { budgetMs: 1, when: () => waiting }, () => now);
    now = 5;
    expect(turns.isLong()).toBe(false);
    waiting = true;
    expect(turns.isLong()).toBe(true);
    now = 11;
    waiting = false;
    expect(turns.isLong()).toBe(true);
  });

  it('the short budget is asked about only once a turn has run past it', () => {
    let now = 0;
    let asked = 0;
    const turns = new EventLoopTurns(10, { budgetMs: 1, when: () => (asked++, true) }, () => now);
    now = 0.5;
    expect(turns.isLong()).toBe(false);
    expect(asked).toBe(0);
    now = 1.5;
    expect(turns.isLong()).toBe(true);
    expect(asked).toBe(1);
  });
});

describe('the requests of a server that wait for their answer', () => {
  const waiting = new WaitingRequests();
  const held: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.url === '/stream') {
      // An event stream: its headers leave at once, and it stays open.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: hello\n\n');
    }
    held.push(response);
  });
  let url = '';

  beforeAll(async () => {
    waiting.watch(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('counts a request until it is answered, and not an event stream whose headers have left', async () => {
    expect(waiting.any()).toBe(false);
    const answer = fetch(`${url}/plain`).then((response) => response.text());
    await eventually(() => held.length === 1);
    expect(waiting.any()).toBe(true);
    held[0]!.end('done');
    expect(await answer).toBe('done');
    await eventually(() => !waiting.any());

    const controller = new AbortController();
    const stream = await fetch(`${url}/stream`, { signal: controller.signal });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(held.length).toBe(2);
    expect(waiting.any()).toBe(false);
    controller.abort();

    // A request whose client went away before its answer no longer waits.
    const gone = new AbortController();
    const abandoned = fetch(`${url}/abandoned`, { signal: gone.signal }).catch(() => 'aborted');
    await eventually(() => held.length === 3);
    expect(waiting.any()).toBe(true);
    gone.abort();
    expect(await abandoned).toBe('aborted');
    await eventually(() => !waiting.any());
  });
});
