import { EventEmitter } from 'node:events';
import type { EventRecord } from '../model/event-record';

/**
 * Live fan-out of committed events to SSE streams and webhook dispatch in
 * this process. Records are published only after they are durable in the
 * audit log, so a subscriber never sees an event that a resume cannot
 * replay. A Redis implementation of the same interface shares events
 * between instances.
 */
export interface EventBus {
  publish(records: EventRecord[]): void;
  /** Events of one workspace; returns an unsubscribe function. */
  subscribeWorkspace(workspaceId: string, listener: (record: EventRecord) => void): () => void;
  /** Every event (webhook dispatch). */
  subscribeAll(listener: (record: EventRecord) => void): () => void;
  /** A small notice for the other instances (a cache to drop); nothing with one instance. */
  notifyOthers(topic: string, payload: string): void;
  /** Notices other instances sent on `topic`. */
  onNotice(topic: string, listener: (payload: string) => void): void;
  close(): Promise<void>;
}

export class InProcessEventBus implements EventBus {
  private readonly emitter = new EventEmitter();
  constructor() {
    // One listener per open SSE stream; thousands are legitimate.
    this.emitter.setMaxListeners(0);
  }
  publish(records: EventRecord[]) {
    for (const record of records) {
      if (record.workspace) this.emitter.emit(`ws:${record.workspace.id}`, record);
      this.emitter.emit('all', record);
    }
  }
  subscribeWorkspace(workspaceId: string, listener: (record: EventRecord) => void) {
    this.emitter.on(`ws:${workspaceId}`, listener);
    return () => void this.emitter.off(`ws:${workspaceId}`, listener);
  }
  subscribeAll(listener: (record: EventRecord) => void) {
    this.emitter.on('all', listener);
    return () => void this.emitter.off('all', listener);
  }
  notifyOthers() {}
  onNotice() {}
  async close() {
    this.emitter.removeAllListeners();
  }
}
