/**
 * Who last set each cell of a row (docs/ATTRIBUTION.md), fetched lazily the
 * first time a cell of the row is hovered and cached per row until the
 * table changes (`version`), so moving along a row asks once.
 */
import { api, workspacePath } from '../lib/api';
import type { AttributedPrincipal } from '../../../src/model/schemas/attribution';

type Entry = { version: number; writers: Promise<Record<string, AttributedPrincipal>> };

export type CellWriters = (rowId: string, version: number) => Promise<Record<string, AttributedPrincipal>>;

/** A cached reader of one workspace's rows' last writers. */
export function cellWritersOf(orgSlug: string, workspaceSlug: string): CellWriters {
  const cache = new Map<string, Entry>();
  return (rowId, version) => {
    const cached = cache.get(rowId);
    if (cached && cached.version === version) return cached.writers;
    const writers = api<{ attribution?: Record<string, AttributedPrincipal> }>('GET', workspacePath(orgSlug, workspaceSlug, `/rows/${encodeURIComponent(rowId)}?attribution=1`))
      .then((row) => row.attribution ?? {})
      .catch(() => {
        // Not cached: the next hover asks again.
        cache.delete(rowId);
        return {};
      });
    cache.set(rowId, { version, writers });
    return writers;
  };
}

export function lastWriterLabel(principal: AttributedPrincipal | undefined): string | null {
  if (!principal) return null;
  return `Last changed by ${principal.owner ? `${principal.name} (agent of ${principal.owner.name})` : principal.name}`;
}
