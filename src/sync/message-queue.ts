import type { WebSocket } from 'ws';

/** Above this many messages waiting on one connection the socket is no longer read... */
const HIGH_WATER = 2_000;
/** ...until the backlog is down to this. */
const LOW_WATER = 500;

/**
 * Hocuspocus keeps a connection's messages still to handle in an array and
 * drops each handled one with `shift()`, which copies the whole array once it
 * is long: a client sending faster than its updates are logged (a script, a
 * replayed trace, a reconnect after a long offline stretch) made every
 * message cost as much as the backlog behind it, most of the server's time
 * in stalls of 5-9 s with the event loop held (issue 21). This queue takes
 * the array's place with the same four members Hocuspocus uses (`push`,
 * `at(0)`, `shift`, `length`), O(1) at both ends; and past HIGH_WATER the
 * socket stops being read until the backlog is under LOW_WATER, so a fast
 * sender waits in TCP flow control instead of in the server's heap.
 */
export class MessageQueue<T> {
  private items: Array<T | undefined> = [];
  private head = 0;
  private paused = false;

  constructor(
    initial: readonly T[],
    private readonly socket: Pick<WebSocket, 'pause' | 'resume'> | null,
  ) {
    this.items.push(...initial);
  }

  get length(): number {
    return this.items.length - this.head;
  }

  /** Hocuspocus empties the queue with `length = 0` when it closes the connection. */
  set length(value: number) {
    if (value !== 0) throw new Error('a message queue can only be emptied');
    this.items = [];
    this.head = 0;
    this.resume();
  }

  push(item: T): number {
    this.items.push(item);
    if (!this.paused && this.length > HIGH_WATER && this.socket) {
      this.paused = true;
      this.socket.pause();
    }
    return this.length;
  }

  at(index: number): T | undefined {
    return index >= 0 && index < this.length ? this.items[this.head + index] : undefined;
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Handled slots are dropped in one copy once they are half the array: amortised O(1).
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (this.length <= LOW_WATER) this.resume();
    return item;
  }

  private resume() {
    if (!this.paused) return;
    this.paused = false;
    this.socket?.resume();
  }
}

type HocuspocusConnection = { messageQueue: unknown; webSocket?: unknown };

const adopted = new WeakSet<object>();

/** Puts a MessageQueue in place of a Hocuspocus connection's array, keeping the messages already in it, in order. */
export function adoptMessageQueue(connection: HocuspocusConnection) {
  if (adopted.has(connection)) return;
  adopted.add(connection);
  const current = connection.messageQueue;
  if (!Array.isArray(current)) return;
  const socket = connection.webSocket as Partial<Pick<WebSocket, 'pause' | 'resume'>> | undefined;
  const pausable = typeof socket?.pause === 'function' && typeof socket.resume === 'function' ? (socket as Pick<WebSocket, 'pause' | 'resume'>) : null;
  connection.messageQueue = new MessageQueue(current, pausable);
}
