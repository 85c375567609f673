import { useState } from 'preact/hooks';
import type { RowFilter, SortKey, ViewDef } from './table-model';

/**
 * A person's own filter and sort of what is on show (a view, or the plain
 * grid), not saved into the table: what they set from the toolbar or a
 * column's menu until they save it as a view, update the view, or reset.
 * A field left out follows the saved view, so a colleague's saved change
 * still reaches someone who changed only the other one.
 */
export interface ViewDraft {
  filter?: RowFilter | null;
  sort?: SortKey[];
}

/** What a grid shows: the saved view's filter and sort, or this person's unsaved ones. */
export interface ShownQuery {
  filter: RowFilter | null;
  sort: SortKey[];
  /** Which of the two differ from the saved view (or, on the plain grid, from none). */
  unsaved: { filter: boolean; sort: boolean };
}

/** The query a view (null: the plain grid) shows for someone with `draft`. */
export function shownQuery(view: Pick<ViewDef, 'filter' | 'sort'> | null, draft: ViewDraft | null): ShownQuery {
  const saved = { filter: view?.filter ?? null, sort: view?.sort ?? [] };
  const filter = draft?.filter !== undefined ? draft.filter : saved.filter;
  const sort = draft?.sort ?? saved.sort;
  return { filter, sort, unsaved: { filter: !sameJson(filter, saved.filter), sort: !sameJson(sort, saved.sort) } };
}

/** A draft after a change, or null when it says nothing the saved view does not. */
export function nextDraft(view: Pick<ViewDef, 'filter' | 'sort'> | null, draft: ViewDraft | null, change: ViewDraft): ViewDraft | null {
  const merged = { ...draft, ...change };
  const shown = shownQuery(view, merged);
  const kept: ViewDraft = {};
  if (shown.unsaved.filter) kept.filter = shown.filter;
  if (shown.unsaved.sort) kept.sort = shown.sort;
  return kept.filter === undefined && kept.sort === undefined ? null : kept;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The drafts of one person on one sheet, one per view (and one for the plain
 * grid), kept in `localStorage` under `{prefix}{viewId}` like the current
 * view, so a draft survives a reload on this device and is nobody else's.
 */
export function useStoredDrafts(prefix: string): { get: (viewId: string) => ViewDraft | null; set: (viewId: string, draft: ViewDraft | null) => void } {
  const [known, setKnown] = useState<ReadonlyMap<string, ViewDraft | null>>(new Map());
  return {
    get: (viewId) => (known.has(prefix + viewId) ? known.get(prefix + viewId)! : readDraft(prefix + viewId)),
    set: (viewId, draft) => {
      const key = prefix + viewId;
      if (draft) writeStored(key, JSON.stringify(draft));
      else removeStored(key);
      setKnown((current) => new Map(current).set(key, draft));
    },
  };
}

function readDraft(key: string): ViewDraft | null {
  try {
    const parsed: unknown = JSON.parse(readStored(key) ?? 'null');
    if (!parsed || typeof parsed !== 'object') return null;
    const { filter, sort } = parsed as ViewDraft;
    // Kept by an older build or edited by hand: a malformed part reads as following the saved view.
    return {
      ...(filter === null || (typeof filter === 'object' && !Array.isArray(filter)) ? { filter } : {}),
      ...(Array.isArray(sort) ? { sort: sort.filter((key) => typeof key?.column === 'string' && (key.direction === 'asc' || key.direction === 'desc')) } : {}),
    };
  } catch {
    return null;
  }
}

export function readStored(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writeStored(key: string, value: string) {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // Storage full or blocked: the choice holds for this visit only.
  }
}

function removeStored(key: string) {
  try {
    window.localStorage.removeItem(key);
  } catch {
    // Blocked storage: nothing was kept either.
  }
}
