/**
 * Sets of Yjs item ids as clock ranges per client: what a run inserted or
 * deleted in a text or doc body (src/model/runs/text.ts). Ranges are kept
 * sorted and merged, so a typist's thousands of one-character items are a
 * few ranges.
 */

/** `[client, clock, length]`: the ids `clock … clock + length - 1` of one client. */
export type IdRange = [client: number, clock: number, length: number];

export class IdRanges {
  private readonly byClient = new Map<number, Array<[start: number, end: number]>>();

  static of(ranges: Iterable<IdRange>): IdRanges {
    const set = new IdRanges();
    for (const [client, clock, length] of ranges) set.add(client, clock, length);
    return set;
  }

  add(client: number, clock: number, length: number): void {
    if (length <= 0) return;
    const list = this.byClient.get(client) ?? [];
    this.byClient.set(client, list);
    let start = clock;
    let end = clock + length;
    // Appends in clock order (the usual case) touch only the tail.
    let i = list.length;
    while (i > 0 && list[i - 1]![0] > start) i--;
    if (i > 0 && list[i - 1]![1] >= start) {
      i--;
      start = Math.min(start, list[i]![0]);
    }
    let j = i;
    while (j < list.length && list[j]![0] <= end) {
      end = Math.max(end, list[j]![1]);
      j++;
    }
    list.splice(i, j - i, [start, end]);
  }

  has(client: number, clock: number): boolean {
    const list = this.byClient.get(client);
    if (!list) return false;
    let low = 0;
    let high = list.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const [start, end] = list[mid]!;
      if (clock < start) high = mid - 1;
      else if (clock >= end) low = mid + 1;
      else return true;
    }
    return false;
  }

  /** Whether every id of the range is in the set. */
  covers(client: number, clock: number, length: number): boolean {
    return this.without(client, clock, length).length === 0;
  }

  /** The parts of `clock … clock + length - 1` not in the set, as `[clock, length]`. */
  without(client: number, clock: number, length: number): Array<[clock: number, length: number]> {
    const list = this.byClient.get(client) ?? [];
    const parts: Array<[number, number]> = [];
    let from = clock;
    const end = clock + length;
    for (const [start, stop] of list) {
      if (stop <= from) continue;
      if (start >= end) break;
      if (start > from) parts.push([from, start - from]);
      from = Math.max(from, stop);
      if (from >= end) break;
    }
    if (from < end) parts.push([from, end - from]);
    return parts;
  }

  /** The parts of `clock … clock + length - 1` in the set. */
  within(client: number, clock: number, length: number): Array<[clock: number, length: number]> {
    const parts: Array<[number, number]> = [];
    let from = clock;
    for (const [start, count] of this.without(client, clock, length)) {
      if (start > from) parts.push([from, start - from]);
      from = start + count;
    }
    if (from < clock + length) parts.push([from, clock + length - from]);
    return parts;
  }

  minus(other: IdRanges): IdRanges {
    const rest = new IdRanges();
    for (const [client, clock, length] of this.ranges()) {
      for (const [start, count] of other.without(client, clock, length)) rest.add(client, start, count);
    }
    return rest;
  }

  *ranges(): Iterable<IdRange> {
    for (const [client, list] of this.byClient) for (const [start, end] of list) yield [client, start, end - start];
  }

  get empty(): boolean {
    return this.byClient.size === 0;
  }
}
