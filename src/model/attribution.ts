/**
 * Who made each piece of a Y document, from the update log. Every Yjs item
 * has an id (client, clock); every logged update names its principal. An
 * update holds items of known clock ranges, so the log is a map from clock
 * ranges to principals; this module keeps that map and answers lookups.
 * Browser-safe: the server builds it from the log (src/persistence/attribution.ts),
 * the walks in doc/attribution.ts and table/attribution.ts read it.
 *
 * The first update to bring an item wins: a client that sends items the
 * server already has (a reconnect replaying what it sent before, a peer's
 * items in its sync step 2) does not take them over.
 */
import * as Y from 'yjs';

/** A principal as the log names it, `user:<id>` or `agent:<id>`; null for the system or unknown. */
export type PrincipalKey = string | null;

export function principalKey(principalType: string | null | undefined, id: string | null | undefined): PrincipalKey {
  return principalType && id ? `${principalType}:${id}` : null;
}

export function parsePrincipalKey(key: string): { principalType: string; id: string } {
  const at = key.indexOf(':');
  return { principalType: key.slice(0, at), id: key.slice(at + 1) };
}

/** One stretch of clocks of one client, end exclusive. */
export type ClockRange = { client: number; from: number; to: number; key: PrincipalKey };

type Stretch = { from: number; to: number; key: PrincipalKey };

/** What a lookup answers: the principal at a clock, and where that answer stops holding (exclusive). */
export type Attribution = { key: PrincipalKey; known: boolean; end: number };

/** The lookup the walks take, so they never depend on how the map was built. */
export type AttributionLookup = (client: number, clock: number) => Attribution;

export class ClockRanges {
  /** Per client: disjoint stretches sorted by clock. */
  private readonly clients = new Map<number, Stretch[]>();

  /** Gives `[from, to)` of `client` to `key` wherever no earlier claim holds it; touching stretches of one key merge. */
  claim(client: number, from: number, to: number, key: PrincipalKey): void {
    if (to <= from) return;
    let list = this.clients.get(client);
    if (!list) this.clients.set(client, (list = []));
    const last = list[list.length - 1];
    // The common case: a client's clocks only grow, so a new claim lands after everything known.
    if (!last || last.to <= from) {
      if (last && last.to === from && last.key === key) last.to = to;
      else list.push({ from, to, key });
      return;
    }
    // Otherwise fill only the gaps inside [from, to).
    const gaps: Stretch[] = [];
    let at = from;
    for (let i = firstEndingAfter(list, from); i < list.length && at < to; i++) {
      const s = list[i]!;
      if (s.from > at) gaps.push({ from: at, to: Math.min(s.from, to), key });
      at = Math.max(at, s.to);
    }
    if (at < to) gaps.push({ from: at, to, key });
    if (gaps.length === 0) return;
    const merged = [...list, ...gaps].sort((a, b) => a.from - b.from);
    const out: Stretch[] = [];
    for (const s of merged) {
      const prev = out[out.length - 1];
      if (prev && prev.to === s.from && prev.key === s.key) prev.to = s.to;
      else out.push({ ...s });
    }
    this.clients.set(client, out);
  }

  /** Claims every item an update (format V1) holds for `key`. */
  claimUpdate(update: Uint8Array, key: PrincipalKey): void {
    for (const range of updateRanges(update)) this.claim(range.client, range.from, range.to, key);
  }

  lookup: AttributionLookup = (client, clock) => {
    const list = this.clients.get(client);
    if (list) {
      const i = firstEndingAfter(list, clock);
      const s = list[i];
      if (s && s.from <= clock) return { key: s.key, known: true, end: s.to };
      if (s) return { key: null, known: false, end: s.from };
    }
    return { key: null, known: false, end: Number.POSITIVE_INFINITY };
  };

  clientIds(): number[] {
    return [...this.clients.keys()];
  }

  /** Every stretch, by client then clock. */
  ranges(clients: Iterable<number> = this.clients.keys()): ClockRange[] {
    const out: ClockRange[] = [];
    for (const client of clients) for (const s of this.clients.get(client) ?? []) out.push({ client, ...s });
    return out;
  }

  get size(): number {
    let n = 0;
    for (const list of this.clients.values()) n += list.length;
    return n;
  }
}

/** Index of the first stretch whose end is past `clock` (list.length when none). */
function firstEndingAfter(list: readonly Stretch[], clock: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.to <= clock) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The clock ranges of the items an update holds (format V1), touching ones
 * merged. Skips (the gaps of a merged update) hold nothing; deleted
 * content (GC) is counted, harmlessly: nothing shown refers to it.
 */
export function updateRanges(update: Uint8Array): Array<{ client: number; from: number; to: number }> {
  const out: Array<{ client: number; from: number; to: number }> = [];
  for (const struct of Y.decodeUpdate(update).structs) {
    if (struct instanceof Y.Skip) continue;
    const { client, clock } = struct.id;
    const last = out[out.length - 1];
    if (last && last.client === client && last.to === clock) last.to = clock + struct.length;
    else out.push({ client, from: clock, to: clock + struct.length });
  }
  return out;
}
