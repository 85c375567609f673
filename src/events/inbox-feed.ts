import { EventEmitter } from 'node:events';

/**
 * Tells open inbox streams that their recipient has new messages. It
 * carries no content: streams read the messages from the database, which
 * stays the one source (so a stream reading after a signal can never show a
 * message that was rolled back). With several instances the signal is shared
 * through the event bus (`shareWith`), so a stream on one instance hears of a
 * message delivered on another at once; streams also re-read at every
 * keep-alive, which covers a signal lost while Redis is away.
 */
export class InboxFeed {
  private readonly emitter = new EventEmitter();
  private share: ((recipientId: string) => void) | null = null;

  constructor() {
    // One listener per open inbox stream.
    this.emitter.setMaxListeners(0);
  }

  /** Signals made here go to the other instances through `share`; theirs arrive through `notify(id, false)`. */
  shareWith(share: (recipientId: string) => void) {
    this.share = share;
  }

  notify(recipientId: string, toOthers = true) {
    this.emitter.emit(recipientId);
    if (toOthers) this.share?.(recipientId);
  }

  /** Returns an unsubscribe function. */
  subscribe(recipientId: string, listener: () => void): () => void {
    this.emitter.on(recipientId, listener);
    return () => void this.emitter.off(recipientId, listener);
  }
}
