/** Media types a route with a raw doc body can answer with, in the order preferred on a tie. */
const RAW_TYPES = ['application/json', 'text/markdown', 'text/plain'] as const;
export type RawType = (typeof RAW_TYPES)[number];

/**
 * The best of JSON, Markdown and plain text for an Accept header: highest
 * q wins, an exact type beats `text/*` beats `*\/*`, ties go to JSON. No
 * header (or nothing acceptable) means JSON, the documented default.
 */
export function negotiate(accept: string | undefined): RawType {
  if (!accept) return 'application/json';
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { range: range.trim(), q: q ? Number(q.slice(2)) : 1 };
  });
  let best: { type: RawType; q: number; specificity: number } | null = null;
  for (const type of RAW_TYPES) {
    for (const { range, q } of ranges) {
      const specificity = range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
      if (specificity < 0 || !(q > 0)) continue;
      if (!best || q > best.q || (q === best.q && specificity > best.specificity)) best = { type, q, specificity };
    }
  }
  return best?.type ?? 'application/json';
}
