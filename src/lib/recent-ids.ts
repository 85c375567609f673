/**
 * The most recent ids seen, up to a bound: for skipping duplicates in a
 * stream whose items may arrive more than once (a catch-up overlapping what
 * was delivered live) without remembering everything forever. When full,
 * the older half is forgotten.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Remembers `id`; false when it was already remembered. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      let excess = this.ids.size - Math.floor(this.capacity / 2);
      for (const old of this.ids) {
        if (excess-- <= 0) break;
        this.ids.delete(old);
      }
    }
    return true;
  }
}
