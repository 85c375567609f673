import { useState } from 'preact/hooks';
import { Icon } from '../ui/icons';
import { CellDisplay, cellText, optionColor, type PeopleDirectory } from './cells';
import type { ColumnDef, ReadRowData, ShownValue, TableModel } from './table-model';

/** Cards drawn per lane; the rest are counted (a board of thousands of rows stays quick to draw). */
const CARDS_PER_LANE = 200;
/** Fields shown on a card under its title. */
const CARD_FIELDS = 3;

interface Lane {
  /** The option's value, or null for the rows with no value. */
  value: string | null;
  label: string;
  color: string;
  rowIds: string[];
}

/**
 * A board view: one lane per option of the status column it groups by, then
 * one per value that is no longer an option, and last "No value" (shown only
 * while it holds cards or a card is being dragged), the view's rows as cards.
 * Dropping a card on another lane sets that cell, an ordinary row change
 * like typing it into the grid; so do the arrow keys on a focused card.
 */
export function Board(props: {
  model: TableModel;
  groupBy: ColumnDef;
  /** The view's shown columns, in its order: the first one (not the lane column) is the card's title. */
  columns: ColumnDef[];
  rowIds: readonly string[];
  version: number;
  editable: boolean;
  people: PeopleDirectory;
  onAddCard: (value: string | null) => void;
  onCardMenu: (rowId: string, anchor: HTMLElement) => void;
}) {
  const { model, groupBy, editable } = props;
  const [over, setOver] = useState<string | null | undefined>(undefined);
  const [dragging, setDragging] = useState<string | null>(null);

  const options = groupBy.options ?? [];
  const noValue: Lane = { value: null, label: 'No value', color: '#9aa1ad', rowIds: [] };
  const lanes: Lane[] = options.map((option, index) => ({ value: option.value, label: option.label, color: optionColor(option, index), rowIds: [] as string[] }));
  const byValue = new Map<string | null, Lane>([...lanes.map((lane): [string, Lane] => [lane.value!, lane]), [null, noValue]]);
  const rows = new Map<string, ReadRowData>();
  for (const rowId of props.rowIds) {
    const data = model.row(rowId);
    if (!data) continue;
    rows.set(rowId, data);
    const raw = data[groupBy.key];
    const first = Array.isArray(raw) ? raw[0] : raw;
    const value = typeof first === 'string' && first !== '' ? first : null;
    let lane = byValue.get(value);
    if (!lane) {
      // A value that is no longer an option (removed from the column) still gets a lane, so its rows stay in sight.
      lane = { value, label: String(value), color: '#868e96', rowIds: [] };
      lanes.push(lane);
      byValue.set(value, lane);
    }
    lane.rowIds.push(rowId);
  }
  // Last, where a row without a value waits to be sorted; the arrow keys reach it even while it is hidden.
  lanes.push(noValue);
  const shownLanes = lanes.filter((lane) => lane !== noValue || lane.rowIds.length > 0 || dragging !== null);

  const titleColumn = props.columns.find((column) => column.key !== groupBy.key);
  const fieldColumns = props.columns.filter((column) => column !== titleColumn && column.key !== groupBy.key);

  const moveTo = (rowId: string, value: string | null) => {
    const current = rows.get(rowId)?.[groupBy.key];
    if ((current ?? null) === value || (current === '' && value === null)) return;
    try {
      model.setCell(rowId, groupBy.key, value);
    } catch {
      // The row was deleted by a peer during the drag: nothing to move.
    }
  };

  const onCardKey = (event: KeyboardEvent, rowId: string, laneIndex: number) => {
    if (!editable || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight')) return;
    const target = lanes[laneIndex + (event.key === 'ArrowLeft' ? -1 : 1)];
    if (!target) return;
    event.preventDefault();
    moveTo(rowId, target.value);
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`.board-card[data-row-id="${CSS.escape(rowId)}"]`)?.focus());
  };

  const endDrag = () => {
    setDragging(null);
    setOver(undefined);
  };

  return (
    <div class="board" role="list" aria-label={`Board by ${groupBy.label}`}>
      {shownLanes.map((lane) => (
        <section
          key={lane.value ?? ''}
          class={`board-lane ${over === lane.value ? 'is-drop-target' : ''}`}
          role="listitem"
          aria-label={lane.label}
          data-lane={lane.value ?? ''}
          onDragOver={(event) => {
            if (!editable || dragging === null) return;
            event.preventDefault();
            if (event.dataTransfer) event.dataTransfer.dropEffect = 'move';
            if (over !== lane.value) setOver(lane.value);
          }}
          onDragLeave={(event) => {
            if (!(event.currentTarget as HTMLElement).contains(event.relatedTarget as Node | null)) setOver(undefined);
          }}
          onDrop={(event) => {
            event.preventDefault();
            const rowId = event.dataTransfer?.getData('text/x-trellis-row') || dragging;
            endDrag();
            if (rowId) moveTo(rowId, lane.value);
          }}
        >
          <header class="board-lane-header">
            {lane.value === null ? <span class="board-lane-none">{lane.label}</span> : <span class="pill" style={{ '--pill': lane.color }}>{lane.label}</span>}
            <span class="board-lane-count">{lane.rowIds.length}</span>
          </header>
          <div class="board-cards">
            {lane.rowIds.slice(0, CARDS_PER_LANE).map((rowId) => {
              const data = rows.get(rowId)!;
              const title = titleColumn ? data[titleColumn.key] : undefined;
              const fields = fieldColumns.filter((column) => !isBlank(data[column.key])).slice(0, CARD_FIELDS);
              return (
                <article
                  key={rowId}
                  class="board-card"
                  data-row-id={rowId}
                  tabIndex={0}
                  draggable={editable}
                  aria-label={titleText(title) || 'Untitled'}
                  onDragStart={(event) => {
                    setDragging(rowId);
                    event.dataTransfer?.setData('text/x-trellis-row', rowId);
                    if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
                  }}
                  onDragEnd={endDrag}
                  onKeyDown={(event) => onCardKey(event, rowId, lanes.indexOf(lane))}
                >
                  <div class="board-card-title">
                    <span>{titleText(title) || <span class="muted">Untitled</span>}</span>
                    <button class="row-menu-button board-card-menu" tabIndex={-1} aria-label="Card options" onClick={(event) => props.onCardMenu(rowId, event.currentTarget as HTMLElement)}>
                      <Icon name="more" size={14} />
                    </button>
                  </div>
                  {fields.length > 0 && (
                    // One grid for every field of the card: labels in one column, values in the next, all aligned alike whatever their type.
                    <dl class="board-card-fields">
                      {fields.map((column) => (
                        <div key={column.key} class="board-card-field" data-key={column.key} data-type={column.type}>
                          <dt class="board-card-label">{column.label}</dt>
                          <dd class="board-card-value">
                            {column.type === 'checkbox' ? (data[column.key] === true ? 'Yes' : 'No') : <CellDisplay column={column} value={data[column.key]} people={props.people} />}
                          </dd>
                        </div>
                      ))}
                    </dl>
                  )}
                </article>
              );
            })}
            {lane.rowIds.length > CARDS_PER_LANE && <p class="muted board-more">and {(lane.rowIds.length - CARDS_PER_LANE).toLocaleString()} more</p>}
          </div>
          {editable && (
            <button class="board-add" onClick={() => props.onAddCard(lane.value)}>
              <Icon name="plus" size={14} />
              <span>New card</span>
            </button>
          )}
        </section>
      ))}
    </div>
  );
}

function isBlank(value: ShownValue | undefined): boolean {
  return value === undefined || value === null || value === '' || value === false || (Array.isArray(value) && value.length === 0);
}

function titleText(value: ShownValue | undefined): string {
  return cellText(value);
}
