import { EventEmitter } from 'node:events';

/**
 * Tells open inbox streams of this process that their recipient has new
 * messages. It carries no content: streams read the messages from the
 * database, which stays the one source (so a stream reading after a signal
 * can never show a message that was rolled back). Streams also re-read at
 * every keep-alive, which is how messages delivered by another instance
 * arrive without a shared bus.
 */
export class InboxFeed {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open inbox stream.
    this.emitter.setMaxListeners(0);
  }

  notify(recipientId: string) {
    this.emitter.emit(recipientId);
  }

  /** Returns an unsubscribe function. */
  subscribe(recipientId: string, listener: () => void): () => void {
    this.emitter.on(recipientId, listener);
    return () => void this.emitter.off(recipientId, listener);
  }
}
