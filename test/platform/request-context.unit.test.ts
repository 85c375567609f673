import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { currentRequestId, enterRequest, leaveRequest, openRequests } from '../../src/lib/request-context';

/** A stand-in for a request's response: `close` once its answer is sent. */
function response() {
  const emitter = new EventEmitter();
  return { once: (event: 'close', listener: () => void) => emitter.once(event, listener), close: () => emitter.emit('close') };
}

const later = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the request id store (request-context.ts)', () => {
  it('gives each open request its id across awaits, none once every request has closed, and a later request its own again', async () => {
    expect(openRequests()).toBe(0);
    const first = response();
    const second = response();
    const seen: Array<string | undefined> = [];
    const a = enterRequest('req-a', first, async () => {
      await later();
      seen.push(currentRequestId());
      await later();
      seen.push(currentRequestId());
    });
    const b = enterRequest('req-b', second, async () => {
      await later();
      seen.push(currentRequestId());
    });
    await Promise.all([a, b]);
    expect(seen.sort()).toEqual(['req-a', 'req-a', 'req-b']);
    expect(openRequests()).toBe(2);

    // One closes; the other is still open.
    first.close();
    expect(openRequests()).toBe(1);
    // The other turns into a stream (sse.ts): no longer open, and its close later counts nothing.
    leaveRequest(second);
    second.close();
    expect(openRequests()).toBe(0);

    // None open: work started now has no request id (and the store, with its promise hooks, is off).
    const background = (async () => {
      await later();
      return currentRequestId();
    })();
    expect(await background).toBeUndefined();

    // A request after that has its id again.
    const third = response();
    await enterRequest('req-c', third, async () => {
      await later();
      expect(currentRequestId()).toBe('req-c');
    });
    third.close();
    expect(openRequests()).toBe(0);
  });
});
