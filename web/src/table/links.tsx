/**
 * What link and lookup cells need beyond their own value: the table model
 * (to read the linked rows' titles) and the workspace's surfaces (a link
 * column names its target sheet by slug). Given by TableSurface around the
 * grid, so the grid itself passes nothing new to its cells.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { surfaceBySlug } from '../../../src/model/surface-slugs';
import type { Surface } from '../workspace-context/types';
import { ROLLUP_FUNCTIONS, ROLLUPS, type RollupFunction } from '../../../src/model/table/formulas/rollups';
import type { ColumnDef, SheetDirectory, TableModel } from './table-model';

export interface LinkEnvironment {
  model: TableModel;
  surfaces: readonly Surface[];
}

export const LinkContext = createContext<LinkEnvironment | null>(null);

/** `view` with the link environment given to every cell under it. */
export function withLinks(environment: LinkEnvironment, view: ComponentChildren) {
  return <LinkContext.Provider value={environment}>{view}</LinkContext.Provider>;
}

export function useLinks(): LinkEnvironment | null {
  return useContext(LinkContext);
}

/** The sheet a link column points at, or null when its surface is gone. */
export function targetSheetOf(column: ColumnDef, surfaces: readonly Surface[]): Surface | null {
  // A link made before its target was renamed names a slug the target had; it still leads there.
  return surfaceBySlug(surfaces.filter((surface) => surface.kind === 'table'), column.targetSurface) ?? null;
}

/** How a linked row reads: its title, or a placeholder for a row without one. */
export function linkLabel(model: TableModel, rowId: string): string {
  return model.title(rowId) || 'Untitled';
}

/** What a new link, lookup, rollup or formula column points at or computes (null while the dialog lacks a choice). */
export type ColumnPointers = { targetSurface?: string; link?: string; field?: string; fn?: string; formula?: string };

/** The workspace's table surfaces as the formula checks name them. */
export function sheetDirectory(surfaces: readonly Surface[]): SheetDirectory {
  const tables = surfaces.filter((surface) => surface.kind === 'table');
  return {
    idOf: (slug) => surfaceBySlug(tables, slug)?.id ?? null,
    ids: () => tables.map((surface) => surface.id),
    nameOf: (id) => tables.find((surface) => surface.id === id)?.slug ?? id,
  };
}

/**
 * The add-column dialog's extra fields: a link names the table it links
 * to; a lookup the link column it reads through and the field it shows; a
 * rollup the same and how it rolls the field up.
 */
export function AddLinkFields(props: {
  type: 'link' | 'lookup' | 'rollup';
  model: TableModel;
  surfaceId: string;
  surfaces: readonly Surface[];
  onChange: (pointers: ColumnPointers | null) => void;
}) {
  const tables = props.surfaces.filter((surface) => surface.kind === 'table');
  const linkColumns = props.model.columns(props.surfaceId).filter((column) => column.type === 'link');
  const [target, setTarget] = useState(tables.find((surface) => surface.id !== props.surfaceId)?.slug ?? tables[0]?.slug ?? '');
  const [link, setLink] = useState(linkColumns[0]?.key ?? '');
  const linkColumn = linkColumns.find((column) => column.key === link);
  const targetSheet = linkColumn ? targetSheetOf(linkColumn, props.surfaces) : null;
  // A rollup may roll up anything, a lookup anything but another lookup.
  const fields = targetSheet ? props.model.columns(targetSheet.id).filter((column) => props.type === 'rollup' || column.type !== 'lookup') : [];
  const [field, setField] = useState(fields[0]?.key ?? '');
  const chosenField = fields.some((column) => column.key === field) ? field : (fields[0]?.key ?? '');
  const [fn, setFn] = useState<RollupFunction>('sum');

  useEffect(() => {
    if (props.type === 'link') props.onChange(target ? { targetSurface: target } : null);
    else if (props.type === 'rollup') props.onChange(link && chosenField ? { link, field: chosenField, fn } : null);
    else props.onChange(link && chosenField ? { link, field: chosenField } : null);
  }, [props.type, target, link, chosenField, fn]);

  if (props.type === 'link') {
    return (
      <label class="field">
        <span>Links to</span>
        <select name="targetSurface" value={target} onChange={(event) => setTarget((event.target as HTMLSelectElement).value)}>
          {tables.map((surface) => (
            <option key={surface.id} value={surface.slug}>
              {surface.name}
            </option>
          ))}
        </select>
      </label>
    );
  }
  if (linkColumns.length === 0) return <p class="muted">A {props.type} reads through a link column: add one first.</p>;
  return (
    <>
      <label class="field">
        <span>Through link</span>
        <select name="link" value={link} onChange={(event) => setLink((event.target as HTMLSelectElement).value)}>
          {linkColumns.map((column) => (
            <option key={column.id} value={column.key}>
              {column.label}
            </option>
          ))}
        </select>
      </label>
      <label class="field">
        <span>{props.type === 'rollup' ? 'Of the field' : 'Shows'}</span>
        <select name="field" value={chosenField} onChange={(event) => setField((event.target as HTMLSelectElement).value)}>
          {fields.map((column) => (
            <option key={column.id} value={column.key}>
              {column.label}
            </option>
          ))}
        </select>
      </label>
      {props.type === 'rollup' && (
        <label class="field">
          <span>Rolled up as</span>
          <select name="fn" value={fn} onChange={(event) => setFn((event.target as HTMLSelectElement).value as RollupFunction)}>
            {ROLLUP_FUNCTIONS.map((name) => (
              <option key={name} value={name}>
                {name} — {ROLLUPS[name].help}
              </option>
            ))}
          </select>
        </label>
      )}
    </>
  );
}
