/**
 * Types of the table document's public model. The Y layout itself is
 * described in `table-layout.ts`; these are the plain values every caller
 * (REST, observer, MCP, web app) reads and writes through `table-document.ts`.
 */

/** A cell value as stored in a row's Y.Map. Arrays hold multi-select values or several person ids. */
export type CellValue = string | number | boolean | null | string[];

export type RowData = Record<string, CellValue>;

export const COLUMN_TYPES = ['text', 'longtext', 'number', 'status', 'person', 'date', 'url', 'checkbox', 'select', 'link', 'lookup', 'formula', 'rollup'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface ColumnOption {
  value: string;
  label: string;
  color?: string;
  [extra: string]: unknown;
}

/** Properties every column carries, whatever the operation. Additional properties are kept as given (the spec accepts them). */
export interface ColumnFields {
  key: string;
  label: string;
  type: ColumnType;
  width?: number;
  hidden?: boolean;
  description?: string;
  options?: ColumnOption[];
  /** A `link` column: the slug of the table surface whose rows its cells name (docs/TABLES.md "Linked rows"). */
  targetSurface?: string;
  /** A `lookup` column: the key of the link column (of the same sheet) it reads through. */
  link?: string;
  /** A `lookup` or `rollup` column: the key of the column of the linked rows it shows or rolls up. */
  field?: string;
  /** A `formula` column: its expression (docs/FORMULAS.md). */
  formula?: string;
  /** A `rollup` column: how the linked rows' values of `field` make one value (`sum`, `avg`, `count`, …). */
  fn?: string;
  /** A `formula` or `rollup` column as read: the type of its values, worked out by the server (ignored on write). */
  resultType?: 'number' | 'text' | 'date' | 'checkbox';
  [extra: string]: unknown;
}

/**
 * A lookup cell as read: the linked rows' values of the lookup's field, one
 * per linked row in the link cell's order. Computed on read, never stored.
 */
export type LookupValue = Array<CellValue | ComputedValue>;

/** A formula or rollup cell as read (docs/FORMULAS.md): a value of its result type, null, or an error. */
export type ComputedValue = number | string | boolean | null | { error: string; message: string };

/** A row's cells as a reader sees them: stored cells, plus lookup, formula and rollup cells computed on read. */
export type ReadRowData = Record<string, CellValue | LookupValue | ComputedValue>;

/**
 * A column as read from the document. `id` is server-assigned and survives
 * renames; `position` is contiguous from 0 in what `readColumns` returns.
 */
export interface ColumnDef extends ColumnFields {
  id: string;
  position: number;
}

/** A column in a full replacement (`PUT /columns`): `id` matches an existing column, otherwise `key` does. */
export interface ReplacementColumn extends ColumnFields {
  id?: string;
  position: number;
}

/** A column to add: the position is always assigned (next after the maximum), the id unless given. */
export interface NewColumn extends ColumnFields {
  id?: string;
  position?: number;
}

export interface TableRow {
  id: string;
  surfaceId: string;
  /** Index within its sheet, contiguous from 0. */
  position: number;
  data: RowData;
}

/**
 * What a transaction did to the table, in domain terms. Only rows whose own
 * entries changed are reported: inserting or deleting a row shifts the
 * positions of the rows after it without a change for each of them.
 */
export type TableChange =
  | { kind: 'row.created'; rowId: string; surfaceId: string }
  | {
      kind: 'row.updated';
      rowId: string;
      surfaceId: string;
      /** Cell keys whose value differs from before the transaction (set, changed or deleted). */
      changedKeys: string[];
      /** True when the row was taken out of its sheet's order and put back elsewhere in it (a reorder). */
      positionChanged?: boolean;
    }
  | { kind: 'row.deleted'; rowId: string; surfaceId: string | null }
  | { kind: 'row.moved_surface'; rowId: string; fromSurfaceId: string; toSurfaceId: string }
  | { kind: 'columns.updated'; surfaceId: string }
  /** Saved views (`views.ts`): `surfaceId` is the sheet the view was on, null when a peer left it without one. */
  | { kind: 'view.created'; viewId: string; surfaceId: string | null }
  | { kind: 'view.updated'; viewId: string; surfaceId: string | null; changedFields: string[] }
  | { kind: 'view.deleted'; viewId: string; surfaceId: string | null };

export type TableErrorCode =
  | 'row_exists'
  | 'row_not_found'
  | 'sheet_not_found'
  | 'column_exists'
  | 'invalid_columns'
  | 'invalid_cursor'
  | 'invalid_row'
  | 'invalid_query';

export interface TableIssue {
  path: string[];
  code: string;
  message: string;
  /** A refused formula: the key of its column, and the 0-based offset in the formula at fault. */
  column?: string;
  position?: number;
}

/**
 * Thrown by the table functions before anything is written, so a failed
 * batch leaves the document as it was. Routes map `code` to a status
 * (`row_not_found` 404, `row_exists`/`column_exists` 409, `invalid_*` 400).
 */
export class TableDocumentError extends Error {
  constructor(
    readonly code: TableErrorCode,
    message: string,
    readonly details: TableIssue[] = [],
  ) {
    super(message);
    this.name = 'TableDocumentError';
  }
}
