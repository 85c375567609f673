import { useState } from 'preact/hooks';
import { addDays, DAY_MS, dayOf } from '../../../src/model/table/windows';
import { Button } from '../ui/primitives';
import type { ColumnDef, TableModel } from './table-model';
import { dayFloor, formatDay, movedDates, placeRows } from './view-items';

/** Items drawn in one day of the month; the rest are counted. */
const ITEMS_PER_DAY = 6;

/**
 * A calendar view (docs/TABLES.md "Calendar and timeline"): a month or a
 * week of days from Monday, each row on the days it spans by the model's
 * window rules (src/model/table/windows.ts, as the server places them).
 * Dragging an item to another day moves its start there, and its end by as
 * much, one ordinary row change that collaborators see live and REST reads
 * at once. Rows without a date are listed apart, not lost.
 */
export function Calendar(props: {
  model: TableModel;
  dateColumn: ColumnDef;
  endDateColumn: ColumnDef | null;
  /** The view's shown columns, in its order: the first one that is not a date is an item's title. */
  columns: ColumnDef[];
  rowIds: readonly string[];
  version: number;
  editable: boolean;
  onItemMenu: (rowId: string, anchor: HTMLElement) => void;
}) {
  const { model, dateColumn, endDateColumn, editable } = props;
  const [mode, setMode] = useState<'month' | 'week'>('month');
  const [anchor, setAnchor] = useState(() => dayOf(Date.now()));
  const [dragging, setDragging] = useState<{ rowId: string; fromDay: string } | null>(null);
  const [over, setOver] = useState<string | null>(null);

  const titleColumn = props.columns.find((column) => column.type !== 'date');
  const days = mode === 'month' ? monthDays(anchor) : weekDays(anchor);
  const first = Date.parse(`${days[0]}T00:00:00Z`);
  const until = Date.parse(`${days[days.length - 1]}T00:00:00Z`) + DAY_MS;
  const byDay = new Map<string, Array<{ rowId: string; title: string }>>(days.map((day) => [day, []]));
  const { dated, undated } = placeRows(model, props.rowIds, { title: titleColumn, date: dateColumn, endDate: endDateColumn });
  for (const { rowId, title, span } of dated) {
    if (span.start >= until || span.end < first) continue;
    for (let at = Math.max(first, dayFloor(span.start)); at <= span.end && at < until; at += DAY_MS) byDay.get(dayOf(at))?.push({ rowId, title });
  }

  const moveTo = (rowId: string, fromDay: string, toDay: string) => {
    const data = model.row(rowId);
    if (!data || fromDay === toDay) return;
    const by = Math.round((Date.parse(`${toDay}T00:00:00Z`) - Date.parse(`${fromDay}T00:00:00Z`)) / DAY_MS);
    try {
      model.setCells(rowId, movedDates(data, dateColumn, endDateColumn, by));
    } catch {
      // Deleted by a peer during the drag: nothing to move.
    }
  };

  const step = (direction: -1 | 1) => setAnchor((day) => (mode === 'week' ? addDays(day, 7 * direction) : addMonths(day, direction)));
  const month = anchor.slice(0, 7);
  const label = mode === 'month' ? monthLabel(anchor) : `${shortDay(days[0]!)} – ${shortDay(days[6]!)}`;

  const item = (entry: { rowId: string; title: string }, day: string | null) => (
    <div
      key={`${entry.rowId}:${day ?? ''}`}
      class="calendar-item"
      role="button"
      tabIndex={0}
      data-row-id={entry.rowId}
      draggable={editable}
      aria-label={entry.title || 'Untitled'}
      onDragStart={(event) => {
        setDragging({ rowId: entry.rowId, fromDay: day ?? '' });
        event.dataTransfer?.setData('text/x-trellis-row', entry.rowId);
        if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
      }}
      onDragEnd={() => {
        setDragging(null);
        setOver(null);
      }}
      onContextMenu={(event) => {
        event.preventDefault();
        props.onItemMenu(entry.rowId, event.currentTarget as HTMLElement);
      }}
    >
      {entry.title || <span class="muted">Untitled</span>}
    </div>
  );

  return (
    <div class={`calendar calendar-${mode}`}>
      <div class="calendar-bar">
        <Button variant="ghost" aria-label={mode === 'month' ? 'Previous month' : 'Previous week'} onClick={() => step(-1)}>
          ‹
        </Button>
        <Button variant="ghost" onClick={() => setAnchor(dayOf(Date.now()))}>
          Today
        </Button>
        <Button variant="ghost" aria-label={mode === 'month' ? 'Next month' : 'Next week'} onClick={() => step(1)}>
          ›
        </Button>
        <h2 class="calendar-title" aria-live="polite">
          {label}
        </h2>
        <span class="calendar-modes" role="group" aria-label="Calendar range">
          <Button variant="ghost" class={mode === 'month' ? 'is-on' : ''} aria-pressed={mode === 'month'} onClick={() => setMode('month')}>
            Month
          </Button>
          <Button variant="ghost" class={mode === 'week' ? 'is-on' : ''} aria-pressed={mode === 'week'} onClick={() => setMode('week')}>
            Week
          </Button>
        </span>
      </div>
      <div class="calendar-body">
        <div class="calendar-grid" role="grid" aria-label={label}>
          {['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((name) => (
            <div key={name} class="calendar-weekday" role="columnheader">
              {name}
            </div>
          ))}
          {days.map((day) => {
            const entries = byDay.get(day) ?? [];
            const shown = mode === 'month' ? entries.slice(0, ITEMS_PER_DAY) : entries;
            return (
              <div
                key={day}
                role="gridcell"
                class={`calendar-day ${day.slice(0, 7) !== month && mode === 'month' ? 'is-other-month' : ''} ${day === dayOf(Date.now()) ? 'is-today' : ''} ${over === day ? 'is-drop-target' : ''}`}
                data-day={day}
                aria-label={longDay(day)}
                onDragOver={(event) => {
                  if (!editable || !dragging) return;
                  event.preventDefault();
                  if (over !== day) setOver(day);
                }}
                onDrop={(event) => {
                  event.preventDefault();
                  const moving = dragging;
                  setDragging(null);
                  setOver(null);
                  if (!moving) return;
                  if (moving.fromDay) moveTo(moving.rowId, moving.fromDay, day);
                  else moveUndated(moving.rowId, day);
                }}
              >
                <span class="calendar-date">{Number(day.slice(8))}</span>
                {shown.map((entry) => item(entry, day))}
                {entries.length > shown.length && <span class="muted calendar-more">and {entries.length - shown.length} more</span>}
              </div>
            );
          })}
        </div>
        <section class="calendar-undated" aria-label="No date">
          <h3>No date</h3>
          {undated.length === 0 ? <p class="muted">Every row has a date.</p> : undated.map((entry) => item(entry, null))}
        </section>
      </div>
    </div>
  );

  function moveUndated(rowId: string, day: string) {
    try {
      model.setCells(rowId, { [dateColumn.key]: day });
    } catch {
      // Deleted by a peer during the drag.
    }
  }
}

/** Monday of the week `day` is in. */
function mondayOf(day: string): string {
  const weekday = (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
  return addDays(day, -weekday);
}

function weekDays(day: string): string[] {
  const monday = mondayOf(day);
  return Array.from({ length: 7 }, (_, index) => addDays(monday, index));
}

/** The weeks, Monday to Sunday, that hold the month of `day`. */
function monthDays(day: string): string[] {
  const firstOfMonth = `${day.slice(0, 7)}-01`;
  const start = mondayOf(firstOfMonth);
  const lastOfMonth = addDays(addMonths(firstOfMonth, 1), -1);
  const days: string[] = [];
  for (let at = start; at <= lastOfMonth || days.length % 7 !== 0; at = addDays(at, 1)) days.push(at);
  return days;
}

function addMonths(day: string, months: number): string {
  const date = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
  date.setUTCMonth(date.getUTCMonth() + months);
  return dayOf(date.getTime());
}

const monthLabel = (day: string) => formatDay(day, { month: 'long', year: 'numeric' });
const shortDay = (day: string) => formatDay(day, { day: 'numeric', month: 'short' });
const longDay = (day: string) => formatDay(day, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
