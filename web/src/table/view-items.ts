import { dateInstant, DAY_MS, rowSpan, type RowSpan } from '../../../src/model/table/windows';
import { lookupText, type ColumnDef, type ReadRowData, type ShownValue, type TableModel } from './table-model';

/** A cell as an item's title reads it (a card, a calendar item, a bar). */
export function cellText(value: ShownValue | undefined): string {
  if (value === undefined || value === null) return '';
  return Array.isArray(value) ? lookupText(value) : String(value);
}

/** The UTC midnight of the day an instant falls on. */
export function dayFloor(instant: number): number {
  return instant - (((instant % DAY_MS) + DAY_MS) % DAY_MS);
}

/** A date cell moved by whole days, keeping its time of day when it has one; null when it holds no date. */
export function shiftedDate(value: unknown, days: number): string | null {
  const at = dateInstant(value);
  if (at === null) return null;
  const moved = new Date(at + days * DAY_MS).toISOString();
  return (value as string).length === 10 ? moved.slice(0, 10) : moved;
}

/** A row's start and end dates both moved by whole days: the cells to write (those that hold a date). */
export function movedDates(data: ReadRowData, date: ColumnDef, endDate: ColumnDef | null, days: number): Record<string, string> {
  const change: Record<string, string> = {};
  for (const column of endDate ? [date, endDate] : [date]) {
    const moved = shiftedDate(data[column.key], days);
    if (moved) change[column.key] = moved;
  }
  return change;
}

/** A `YYYY-MM-DD` day in the reader's language (the day itself, not shifted into their time zone). */
export function formatDay(day: string, options: Intl.DateTimeFormatOptions): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { ...options, timeZone: 'UTC' });
}

export type PlacedRow = { rowId: string; title: string; data: ReadRowData; span: RowSpan };

/** The rows of a calendar or timeline, each with its span by the model's window rules, and apart those without a date. */
export function placeRows(
  model: TableModel,
  rowIds: readonly string[],
  columns: { title: ColumnDef | undefined; date: ColumnDef; endDate: ColumnDef | null },
): { dated: PlacedRow[]; undated: Array<{ rowId: string; title: string }> } {
  const dated: PlacedRow[] = [];
  const undated: Array<{ rowId: string; title: string }> = [];
  for (const rowId of rowIds) {
    const data = model.row(rowId);
    if (!data) continue;
    const title = cellText(columns.title ? data[columns.title.key] : undefined);
    const span = rowSpan(data, columns.date.key, columns.endDate?.key);
    if (span) dated.push({ rowId, title, data, span });
    else undated.push({ rowId, title });
  }
  return { dated, undated };
}
