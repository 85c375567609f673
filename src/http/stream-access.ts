/**
 * Re-authorizes open event streams twice a second, as the sync server does
 * for its connections (src/access/connection-auth.ts): a revoked key, an
 * ended session, a revoked OAuth grant or a lost membership ends the stream
 * within a second. Streams that share a credential and a workspace are
 * decided once per round.
 */
export class StreamAccessMonitor {
  private readonly groups = new Map<string, Set<WatchedStream>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly intervalMs = 500) {}

  start() {
    this.timer = setInterval(() => void this.recheck(), this.intervalMs).unref();
  }

  stop() {
    clearInterval(this.timer);
  }

  /** `stillAllowed` answers for every stream of `key`; `close` ends this one. Returns the unwatch function. */
  watch(key: string, stillAllowed: () => Promise<boolean>, close: () => void): () => void {
    const stream: WatchedStream = { stillAllowed, close };
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = new Set()));
    group.add(stream);
    return () => {
      group.delete(stream);
      if (group.size === 0 && this.groups.get(key) === group) this.groups.delete(key);
    };
  }

  async recheck() {
    if (this.running) return;
    this.running = true;
    try {
      for (const group of [...this.groups.values()]) {
        const [first] = group;
        if (!first) continue;
        const allowed = await first.stillAllowed().catch(() => false);
        if (!allowed) [...group].forEach((stream) => stream.close());
      }
    } finally {
      this.running = false;
    }
  }
}

type WatchedStream = { stillAllowed: () => Promise<boolean>; close: () => void };
