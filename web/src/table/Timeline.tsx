import { useRef, useState } from 'preact/hooks';
import { addDays, DAY_MS, dayOf, rowSpan } from '../../../src/model/table/windows';
import { Button } from '../ui/primitives';
import type { ColumnDef, ReadRowData, TableModel } from './table-model';
import { dayFloor, formatDay, movedDates, placeRows } from './view-items';

type Zoom = 'day' | 'week' | 'month';
/** Pixels a day takes at each zoom, and the days on show. */
const ZOOMS: Record<Zoom, { dayWidth: number; days: number }> = { day: { dayWidth: 48, days: 28 }, week: { dayWidth: 16, days: 91 }, month: { dayWidth: 5, days: 365 } };
const BAR_HEIGHT = 28;

/**
 * A timeline view (docs/TABLES.md "Calendar and timeline"): each row a bar
 * from its start to its end date (placed by the model's window rules, as the
 * server places them), in lanes by the view's `groupBy` (a status or person
 * column) when it has one, at a zoom of days, weeks or months. Dragging a
 * bar moves both its dates by whole days; dragging its right end changes
 * the end date; each is one row change collaborators see live. Rows without
 * a date are listed apart.
 */
export function Timeline(props: {
  model: TableModel;
  dateColumn: ColumnDef;
  endDateColumn: ColumnDef | null;
  laneColumn: ColumnDef | null;
  columns: ColumnDef[];
  rowIds: readonly string[];
  version: number;
  editable: boolean;
  onBarMenu: (rowId: string, anchor: HTMLElement) => void;
}) {
  const { model, dateColumn, endDateColumn, laneColumn, editable } = props;
  const [zoom, setZoom] = useState<Zoom>('day');
  const [start, setStart] = useState(() => addDays(dayOf(Date.now()), -7));
  // The drag on show: how many days the bar moves (or its end does) so far.
  const [drag, setDrag] = useState<{ rowId: string; part: 'bar' | 'end'; by: number } | null>(null);
  const dragRef = useRef<{ rowId: string; part: 'bar' | 'end'; x: number; by: number } | null>(null);

  const { dayWidth, days } = ZOOMS[zoom];
  const first = Date.parse(`${start}T00:00:00Z`);
  const until = first + days * DAY_MS;
  const titleColumn = props.columns.find((column) => column.type !== 'date' && column.key !== laneColumn?.key);

  type Bar = { rowId: string; title: string; startAt: number; endAt: number };
  const lanes = new Map<string, { label: string; bars: Bar[] }>();
  const laneOf = (data: ReadRowData) => {
    if (!laneColumn) return { key: '', label: '' };
    const raw = data[laneColumn.key];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value !== 'string' || value === '') return { key: '\u0000none', label: 'No value' };
    const option = laneColumn.options?.find((candidate) => candidate.value === value);
    return { key: value, label: option?.label ?? value };
  };
  for (const option of laneColumn?.type === 'status' ? (laneColumn.options ?? []) : []) lanes.set(option.value, { label: option.label, bars: [] });
  const { dated, undated } = placeRows(model, props.rowIds, { title: titleColumn, date: dateColumn, endDate: endDateColumn });
  for (const { rowId, title, data, span } of dated) {
    const lane = laneOf(data);
    if (!lanes.has(lane.key)) lanes.set(lane.key, { label: lane.label, bars: [] });
    if (span.start >= until || span.end < first) continue;
    lanes.get(lane.key)!.bars.push({ rowId, title, startAt: dayFloor(span.start), endAt: dayFloor(span.end) });
  }

  const commit = (rowId: string, part: 'bar' | 'end', by: number) => {
    const data = model.row(rowId);
    if (!data || by === 0) return;
    let change: Record<string, string> = {};
    if (part === 'bar') {
      change = movedDates(data, dateColumn, endDateColumn, by);
    } else if (endDateColumn) {
      const span = rowSpan(data, dateColumn.key, endDateColumn.key);
      if (!span) return;
      // The end never goes before the start.
      const end = Math.max(span.start, dayFloor(span.end) + by * DAY_MS);
      const current = data[endDateColumn.key];
      change[endDateColumn.key] = typeof current === 'string' && current.length > 10 ? new Date(end).toISOString() : dayOf(end);
    }
    try {
      model.setCells(rowId, change);
    } catch {
      // Deleted by a peer during the drag.
    }
  };

  const startDrag = (event: PointerEvent, rowId: string, part: 'bar' | 'end') => {
    if (!editable || event.button !== 0 || (part === 'end' && !endDateColumn)) return;
    event.preventDefault();
    event.stopPropagation();
    (event.currentTarget as HTMLElement).setPointerCapture?.(event.pointerId);
    dragRef.current = { rowId, part, x: event.clientX, by: 0 };
    setDrag({ rowId, part, by: 0 });
  };
  const moveDrag = (event: PointerEvent) => {
    const current = dragRef.current;
    if (!current) return;
    const by = Math.round((event.clientX - current.x) / dayWidth);
    if (by !== current.by) {
      current.by = by;
      setDrag({ rowId: current.rowId, part: current.part, by });
    }
  };
  const endDrag = () => {
    const current = dragRef.current;
    dragRef.current = null;
    setDrag(null);
    if (current) commit(current.rowId, current.part, current.by);
  };

  const ticks: Array<{ day: string; label: string }> = [];
  for (let index = 0; index < days; index++) {
    const day = addDays(start, index);
    const date = new Date(`${day}T00:00:00Z`);
    if (zoom === 'day') ticks.push({ day, label: String(date.getUTCDate()) });
    else if (zoom === 'week' && date.getUTCDay() === 1) ticks.push({ day, label: formatDay(day, { day: 'numeric', month: 'short' }) });
    else if (zoom === 'month' && date.getUTCDate() === 1) ticks.push({ day, label: formatDay(day, { month: 'short', year: 'numeric' }) });
  }
  const left = (at: number) => ((at - first) / DAY_MS) * dayWidth;
  const width = days * dayWidth;
  const step = zoom === 'day' ? 7 : zoom === 'week' ? 28 : 91;

  return (
    <div class="timeline" onPointerMove={moveDrag} onPointerUp={endDrag} onPointerCancel={endDrag}>
      <div class="calendar-bar">
        <Button variant="ghost" aria-label="Earlier" onClick={() => setStart((day) => addDays(day, -step))}>
          ‹
        </Button>
        <Button variant="ghost" onClick={() => setStart(addDays(dayOf(Date.now()), -7))}>
          Today
        </Button>
        <Button variant="ghost" aria-label="Later" onClick={() => setStart((day) => addDays(day, step))}>
          ›
        </Button>
        <h2 class="calendar-title">
          {formatDay(start, { day: 'numeric', month: 'short', year: 'numeric' })} – {formatDay(addDays(start, days - 1), { day: 'numeric', month: 'short', year: 'numeric' })}
        </h2>
        <span class="calendar-modes" role="group" aria-label="Zoom">
          {(['day', 'week', 'month'] as const).map((choice) => (
            <Button key={choice} variant="ghost" class={zoom === choice ? 'is-on' : ''} aria-pressed={zoom === choice} onClick={() => setZoom(choice)}>
              {choice === 'day' ? 'Days' : choice === 'week' ? 'Weeks' : 'Months'}
            </Button>
          ))}
        </span>
      </div>
      <div class="timeline-scroll">
        <div class="timeline-canvas" style={{ width: `${width}px` }}>
          <div class="timeline-scale" aria-hidden="true">
            {ticks.map((tick) => (
              <span key={tick.day} class="timeline-tick" style={{ left: `${left(Date.parse(`${tick.day}T00:00:00Z`))}px` }}>
                {tick.label}
              </span>
            ))}
          </div>
          {[...lanes.entries()].map(([key, lane]) => (
            <section key={key} class="timeline-lane" aria-label={laneColumn ? lane.label : 'Rows'} data-lane={key}>
              {laneColumn && <h3 class="timeline-lane-title">{lane.label}</h3>}
              <div class="timeline-bars" style={{ height: `${Math.max(1, lane.bars.length) * (BAR_HEIGHT + 6) + 6}px` }}>
                {lane.bars.map((bar, index) => {
                  const shift = drag?.rowId === bar.rowId ? drag.by * DAY_MS : 0;
                  const startAt = bar.startAt + (drag?.part === 'bar' ? shift : 0);
                  const endAt = Math.max(startAt, bar.endAt + shift);
                  return (
                    <div
                      key={bar.rowId}
                      class={`timeline-bar ${drag?.rowId === bar.rowId ? 'is-dragging' : ''}`}
                      data-row-id={bar.rowId}
                      role="button"
                      tabIndex={0}
                      aria-label={`${bar.title || 'Untitled'}: ${dayOf(bar.startAt)} to ${dayOf(bar.endAt)}`}
                      style={{ left: `${left(startAt)}px`, width: `${((endAt - startAt) / DAY_MS + 1) * dayWidth}px`, top: `${6 + index * (BAR_HEIGHT + 6)}px`, height: `${BAR_HEIGHT}px` }}
                      onPointerDown={(event) => startDrag(event, bar.rowId, 'bar')}
                      onContextMenu={(event) => {
                        event.preventDefault();
                        props.onBarMenu(bar.rowId, event.currentTarget as HTMLElement);
                      }}
                    >
                      <span class="timeline-bar-title">{bar.title || 'Untitled'}</span>
                      {editable && endDateColumn && <span class="timeline-bar-end" aria-hidden="true" onPointerDown={(event) => startDrag(event, bar.rowId, 'end')} />}
                    </div>
                  );
                })}
              </div>
            </section>
          ))}
        </div>
      </div>
      <section class="calendar-undated" aria-label="No date">
        <h3>No date</h3>
        {undated.length === 0 ? (
          <p class="muted">Every row has a date.</p>
        ) : (
          undated.map((entry) => (
            <div key={entry.rowId} class="calendar-item" data-row-id={entry.rowId}>
              {entry.title || <span class="muted">Untitled</span>}
            </div>
          ))
        )}
      </section>
    </div>
  );
}

