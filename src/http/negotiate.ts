/** Media types a route with a raw doc body can answer with, in the order preferred on a tie. */
const RAW_TYPES = ['application/json', 'text/markdown', 'text/plain'] as const;
export type RawType = (typeof RAW_TYPES)[number];

/**
 * The best of `types` (JSON, Markdown and plain text unless told) for an
 * Accept header: highest q wins, an exact type beats `text/*` beats `*\/*`,
 * ties go to the earlier type. No header (or nothing acceptable) means the
 * first type, JSON, the documented default.
 */
export function negotiate<T extends string = RawType>(accept: string | undefined, types: readonly T[] = RAW_TYPES as unknown as readonly T[]): T {
  if (!accept) return types[0]!;
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { range: range.trim(), q: q ? Number(q.slice(2)) : 1 };
  });
  let best: { type: T; q: number; specificity: number } | null = null;
  for (const type of types) {
    for (const { range, q } of ranges) {
      const specificity = range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
      if (specificity < 0 || !(q > 0)) continue;
      if (!best || q > best.q || (q === best.q && specificity > best.specificity)) best = { type, q, specificity };
    }
  }
  return best?.type ?? types[0]!;
}
