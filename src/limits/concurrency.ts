/**
 * Work that may run at most so many times at once per key (CSV imports per
 * organisation), counted in this process: what it protects is this
 * process's memory and event loop. `tryAcquire` answers a release function,
 * or null when the key is at its limit.
 */
export class ConcurrencyLimit {
  private readonly running = new Map<string, number>();

  tryAcquire(key: string, limit: number): (() => void) | null {
    const now = this.running.get(key) ?? 0;
    if (now >= limit) return null;
    this.running.set(key, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
    };
  }
}
