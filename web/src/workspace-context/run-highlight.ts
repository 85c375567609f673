import { createStore } from '../lib/store';
import type { ChangeRecord } from '../../../src/model/schemas/runs';

/**
 * The run whose changes the grid and the doc mark (docs/RUNS.md, "In the
 * web app"): chosen in the Activity panel, read by the surfaces. Rows the
 * run created or moved are marked whole, rows it updated on the cells it
 * set; a doc marks the text the run inserted that is still there.
 */
export type RunHighlight = {
  runId: string;
  /** Per row: null when the whole row is the run's, else the column keys of the cells it set. */
  rows: Map<string, ReadonlySet<string> | null>;
  /** Per doc or html surface id: the text it inserted, in document order. */
  inserted: Map<string, string[]>;
};

export const runHighlight = createStore<RunHighlight | null>(null);

export function highlightOf(runId: string, changes: readonly ChangeRecord[]): RunHighlight {
  const rows = new Map<string, ReadonlySet<string> | null>();
  const inserted = new Map<string, string[]>();
  for (const change of changes) {
    if (change.kind === 'row.created' || change.kind === 'row.moved') rows.set(change.rowId, null);
    else if (change.kind === 'row.updated' && rows.get(change.rowId) !== null) rows.set(change.rowId, new Set([...(rows.get(change.rowId) ?? []), ...Object.keys(change.cells)]));
    else if (change.kind === 'doc.changed' || change.kind === 'html.changed') inserted.set(change.surfaceId, [...(inserted.get(change.surfaceId) ?? []), ...change.inserted]);
  }
  return { runId, rows, inserted };
}

/** How a row is marked, as a string a grid row compares to know whether to draw again: '' none, '*' whole, else its cells' keys. */
export function rowMarkOf(highlight: RunHighlight | null, rowId: string): string {
  if (!highlight || !highlight.rows.has(rowId)) return '';
  const cells = highlight.rows.get(rowId);
  return cells ? [...cells].sort().join(',') : '*';
}
