import type { Clock } from '../lib/clock';
import type { DatabaseHandle } from './database';
import type { WriteEpochs } from './write-epochs';

/**
 * A short-lived cache of reads that nearly every request repeats (who the
 * caller is, which workspace a slug names, the caller's memberships, a
 * workspace's surfaces). An answer is served from memory only while
 *
 * - no write through this process has touched a table it may depend on
 *   since it was read (`WriteEpochs`: revoking a key, removing a member,
 *   renaming a workspace shows on the very next request), and
 * - it is younger than `ttlMs` (1 s): what another instance writes shows
 *   here within that, and so does the passage of time (a session expiring).
 *   Age is measured on the monotonic clock and on the service clock, so a
 *   test that moves its clock forward sees fresh reads.
 *
 * Concurrent misses of one key share one load. Values are shared between
 * requests: callers must not mutate them. At most `maxEntries` are held;
 * past that the oldest is dropped.
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, { epoch: number; value: Promise<unknown> }>();

  constructor(
    private readonly epochs: WriteEpochs,
    private readonly clock: Clock,
    private readonly ttlMs = 1_000,
    private readonly maxEntries = 20_000,
  ) {}

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const epoch = this.epochs.current;
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.epoch === epoch && this.fresh(hit)) return hit.value as Promise<T>;
      this.entries.delete(key);
    }
    const inFlight = this.loading.get(key);
    if (inFlight && inFlight.epoch === epoch) return inFlight.value as Promise<T>;
    const startedAt = performance.now();
    const startedClock = this.clock.now().getTime();
    const value = load();
    this.loading.set(key, { epoch, value });
    value.then(
      () => {
        if (this.loading.get(key)?.value === value) this.loading.delete(key);
        // A write that moved the epoch meanwhile may have changed what was read: not kept.
        if (this.epochs.current !== epoch) return;
        this.entries.set(key, { value, epoch, at: startedAt, clockAt: startedClock });
        if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      },
      () => {
        if (this.loading.get(key)?.value === value) this.loading.delete(key);
      },
    );
    return value;
  }

  /** Forgets everything (tests; a process that learns of writes elsewhere). */
  clear() {
    this.entries.clear();
    this.loading.clear();
  }

  private fresh(entry: Entry): boolean {
    const age = performance.now() - entry.at;
    const clockAge = this.clock.now().getTime() - entry.clockAt;
    return age < this.ttlMs && clockAge >= 0 && clockAge < this.ttlMs;
  }
}

type Entry = { value: Promise<unknown>; epoch: number; at: number; clockAt: number };

const caches = new WeakMap<DatabaseHandle, ReadCache>();

/** The one request-context cache of a database (every reader shares it, so one write retires it for all). */
export function readCacheOf(database: DatabaseHandle, clock: Clock): ReadCache {
  let cache = caches.get(database);
  if (!cache) caches.set(database, (cache = new ReadCache(database.epochs, clock)));
  return cache;
}
