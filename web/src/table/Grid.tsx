import { Component } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../ui/icons';
import { CellDisplay, columnWidth, TYPE_LABELS, type PeopleDirectory } from './cells';
import { CellEditor, type EditExit } from './editors';
import type { CellValue, ColumnDef, RowSuggestionEntry, SheetSuggestions, ShownValue, TableModel } from './table-model';
import { GhostCell, SuggestedCell, SuggestionActions, SUGGESTION_COLUMN_WIDTH, type Decide } from './suggestions';
import { lastWriterLabel, type CellWriters } from './cell-writers';
import { useStore } from '../lib/store';
import { rowMarkOf, runHighlight } from '../workspace-context/run-highlight';

export const ROW_HEIGHT = 36;
const HEADER_HEIGHT = 38;
const GUTTER_WIDTH = 60;
const ADD_COLUMN_WIDTH = 44;
/** Rows drawn beyond the viewport on each side, so a fast scroll rarely shows blank space. */
const OVERSCAN = 8;

export interface CellAddress {
  rowId: string;
  key: string;
}

export interface PeerCell {
  rowId: string;
  key: string;
  name: string;
  color: string;
}

export interface GridProps {
  model: TableModel;
  surfaceId: string;
  columns: ColumnDef[];
  rowIds: readonly string[];
  /** Bumped on every change to the table: the grid re-reads what it shows. */
  version: number;
  editable: boolean;
  /** Whether rows have a menu (editors, and commenters for its comment items). */
  rowMenus: boolean;
  people: PeopleDirectory;
  peers: PeerCell[];
  active: CellAddress | null;
  onActiveChange: (cell: CellAddress | null) => void;
  onHeaderMenu: (column: ColumnDef, anchor: HTMLElement) => void;
  onRowMenu: (rowId: string, anchor: HTMLElement) => void;
  onAddColumn: (anchor: HTMLElement) => void;
  onAddRow: (afterRowId?: string) => void;
  onResizeColumn: (column: ColumnDef, width: number) => void;
  /** Adds a value typed into a status or select cell to the column's options (editors): answers the new option's value. */
  onCreateOption?: (column: ColumnDef, label: string) => string | null;
  onUndo: () => void;
  onRedo: () => void;
  /** A view's row height in pixels (ROW_HEIGHT by default); taller rows wrap their text. */
  rowHeight?: number;
  /** Open row suggestions of the sheet, shown inline (none by default). */
  suggestions?: SheetSuggestions;
  /** Whether Accept / Reject are offered (editors). */
  canDecide?: boolean;
  onDecide?: Decide;
  /** A commenter's grid: edits become suggestions (`onSuggestCell`) instead of changes. */
  suggesting?: boolean;
  onSuggestCell?: (rowId: string, key: string, value: CellValue) => void;
  /** The viewer, whose own suggestions offer Withdraw. */
  myId?: string;
  /** Who last set each cell of a row: shown when a cell is hovered. */
  cellWriters?: CellWriters;
}

const NO_SUGGESTIONS: SheetSuggestions = { byRow: new Map(), created: [], key: '' };

/**
 * The table grid: only the rows in view (plus a margin) are in the DOM, each
 * placed at `index * ROW_HEIGHT`, so 5,000 rows scroll like 50. The focus
 * stays on the grid itself and the keyboard moves the active cell; an
 * editor opens over the cell being edited.
 */
export function Grid(props: GridProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const [viewport, setViewport] = useState({ top: 0, height: 600 });
  const [editing, setEditing] = useState<{ rowId: string; key: string; initialText?: string } | null>(null);
  const frame = useRef(0);
  const handlers = useRef<RowHandlers>(null as unknown as RowHandlers);
  const highlight = useStore(runHighlight);

  useLayoutEffect(() => {
    const element = scroller.current!;
    const measure = () => setViewport({ top: element.scrollTop, height: element.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const onScroll = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const element = scroller.current;
      if (!element) return;
      // The frozen first column casts a shadow once something has scrolled under it; no render needed for that.
      element.classList.toggle('is-scrolled-x', element.scrollLeft > 0);
      setViewport({ top: element.scrollTop, height: element.clientHeight });
    });
  };

  const { columns, rowIds } = props;
  const suggestions = props.suggestions ?? NO_SUGGESTIONS;
  const rowHeight = props.rowHeight ?? ROW_HEIGHT;
  const widths = columns.map(columnWidth);
  const offsets: number[] = [];
  widths.reduce((left, width, i) => ((offsets[i] = left), left + width), GUTTER_WIDTH);
  // Suggestions add a column after the others with who suggested what and the buttons to decide.
  const suggesting = suggestions.byRow.size > 0 || suggestions.created.length > 0;
  const actionsLeft = GUTTER_WIDTH + widths.reduce((a, b) => a + b, 0);
  const totalWidth = actionsLeft + (suggesting ? SUGGESTION_COLUMN_WIDTH : 0) + ADD_COLUMN_WIDTH;
  // Suggested new rows are drawn after the rows, as ghosts.
  const bodyHeight = (rowIds.length + suggestions.created.length) * rowHeight;

  const first = Math.max(0, Math.floor((viewport.top - HEADER_HEIGHT) / rowHeight) - OVERSCAN);
  const last = Math.min(rowIds.length, Math.ceil((viewport.top + viewport.height) / rowHeight) + OVERSCAN);

  const activeRow = props.active ? rowIds.indexOf(props.active.rowId) : -1;
  const activeCol = props.active ? columns.findIndex((column) => column.key === props.active!.key) : -1;
  const hasActive = activeRow >= 0 && activeCol >= 0;

  // The edited row or column went away (a peer deleted it): stop editing.
  useEffect(() => {
    if (editing && (!rowIds.includes(editing.rowId) || !columns.some((column) => column.key === editing.key))) setEditing(null);
  }, [props.version]);

  const focusGrid = () => scroller.current?.focus({ preventScroll: true });

  // A cell made active from outside the grid (a search hit, an inbox link) is scrolled into view, wherever it is.
  useEffect(() => {
    if (hasActive) scrollIntoView(activeRow, activeCol);
  }, [props.active?.rowId, props.active?.key]);

  const scrollIntoView = (row: number, col: number) => {
    const element = scroller.current;
    if (!element) return;
    const top = HEADER_HEIGHT + row * rowHeight;
    if (top - HEADER_HEIGHT < element.scrollTop) element.scrollTop = top - HEADER_HEIGHT;
    else if (top + rowHeight > element.scrollTop + element.clientHeight) element.scrollTop = top + rowHeight - element.clientHeight;
    const left = offsets[col] ?? 0;
    const right = left + (widths[col] ?? 0);
    // The first column is frozen (always in sight); any other cell must come out from under it and the gutter.
    if (col === 0) return;
    const covered = GUTTER_WIDTH + (widths[0] ?? 0);
    if (left - covered < element.scrollLeft) element.scrollLeft = left - covered;
    else if (right > element.scrollLeft + element.clientWidth) element.scrollLeft = right - element.clientWidth;
  };

  const moveTo = (row: number, col: number) => {
    if (rowIds.length === 0 || columns.length === 0) return;
    const r = Math.max(0, Math.min(row, rowIds.length - 1));
    const c = Math.max(0, Math.min(col, columns.length - 1));
    props.onActiveChange({ rowId: rowIds[r]!, key: columns[c]!.key });
    scrollIntoView(r, c);
  };

  const canEdit = props.editable || props.suggesting === true;
  const write = (rowId: string, key: string, value: CellValue) => {
    if (!canEdit) return;
    try {
      if (props.editable) props.model.setCell(rowId, key, value);
      else props.onSuggestCell?.(rowId, key, value);
    } catch {
      // The row was deleted by a peer while it was being edited: nothing to write to.
    }
  };

  const startEdit = (initialText?: string) => {
    if (!canEdit || !hasActive) return;
    const column = columns[activeCol]!;
    if (column.type === 'checkbox') {
      const current = props.model.row(props.active!.rowId)?.[column.key];
      write(props.active!.rowId, column.key, !(current === true));
      return;
    }
    setEditing({ rowId: props.active!.rowId, key: column.key, initialText });
  };

  const finishEdit = (value: CellValue | undefined, exit: EditExit) => {
    const target = editing;
    setEditing(null);
    if (target && value !== undefined) {
      const current = props.model.row(target.rowId)?.[target.key];
      if (!(current === value || (current === undefined && value === null))) write(target.rowId, target.key, value);
    }
    focusGrid();
    if (exit === 'down') moveTo(activeRow + 1, activeCol);
    else if (exit === 'right') moveTo(activeRow, activeCol + 1);
    else if (exit === 'left') moveTo(activeRow, activeCol - 1);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (editing) return;
    const mod = event.metaKey || event.ctrlKey;
    if (mod && event.key.toLowerCase() === 'z') {
      event.preventDefault();
      return event.shiftKey ? props.onRedo() : props.onUndo();
    }
    if (mod && event.key.toLowerCase() === 'y') {
      event.preventDefault();
      return props.onRedo();
    }
    if (!hasActive) {
      if (['ArrowDown', 'ArrowUp', 'ArrowLeft', 'ArrowRight', 'Enter', 'Tab'].includes(event.key) && rowIds.length > 0 && columns.length > 0) {
        if (event.key === 'Tab') return;
        event.preventDefault();
        moveTo(0, 0);
      }
      return;
    }
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 400) / rowHeight) - 1);
    switch (event.key) {
      case 'ArrowDown':
        moveTo(mod ? rowIds.length - 1 : activeRow + 1, activeCol);
        break;
      case 'ArrowUp':
        moveTo(mod ? 0 : activeRow - 1, activeCol);
        break;
      case 'ArrowRight':
        moveTo(activeRow, mod ? columns.length - 1 : activeCol + 1);
        break;
      case 'ArrowLeft':
        moveTo(activeRow, mod ? 0 : activeCol - 1);
        break;
      case 'Tab':
        if (event.shiftKey ? activeCol === 0 : activeCol === columns.length - 1) return;
        moveTo(activeRow, activeCol + (event.shiftKey ? -1 : 1));
        break;
      case 'Home':
        moveTo(mod ? 0 : activeRow, 0);
        break;
      case 'End':
        moveTo(mod ? rowIds.length - 1 : activeRow, columns.length - 1);
        break;
      case 'PageDown':
        moveTo(activeRow + page, activeCol);
        break;
      case 'PageUp':
        moveTo(activeRow - page, activeCol);
        break;
      case 'Enter':
        if (event.shiftKey) {
          if (props.editable) props.onAddRow(props.active!.rowId);
        } else startEdit();
        break;
      case 'F2':
        startEdit();
        break;
      case ' ':
        if (columns[activeCol]!.type === 'checkbox') startEdit();
        else startEdit(' ');
        break;
      case 'Delete':
      case 'Backspace':
        write(props.active!.rowId, columns[activeCol]!.key, null);
        break;
      case 'Escape':
        props.onActiveChange(null);
        break;
      default:
        if (event.key.length === 1 && !mod && !event.altKey) {
          startEdit(event.key);
          break;
        }
        return;
    }
    event.preventDefault();
  };

  // Rows re-render only when something they show changed: while scrolling, only the rows that
  // come into view render. Their event handlers go through this ref, so they never act on stale state.
  handlers.current = {
    select: (rowId, key) => {
      focusGrid();
      props.onActiveChange({ rowId, key });
    },
    edit: () => startEdit(),
    toggle: (rowId, key, value) => write(rowId, key, !(value === true)),
    rowMenu: (rowId, anchor) => props.onRowMenu(rowId, anchor),
    finishEdit,
    createOption: (column, label) => props.onCreateOption?.(column, label) ?? null,
    decide: (suggestion, decision) => props.onDecide?.(suggestion, decision),
    hover: (rowId, key, cell) => {
      void props.cellWriters?.(rowId, props.version).then((writers) => {
        const label = lastWriterLabel(writers[key]);
        if (label) cell.title = label;
        else cell.removeAttribute('title');
      });
    },
  };
  const layoutKey = columns.map((column, i) => `${column.id}:${column.key}:${column.type}:${widths[i]}:${column.label}`).join('|');
  const rows = [];
  for (let index = first; index < last; index++) {
    const rowId = rowIds[index]!;
    const rowPeers = props.peers.filter((peer) => peer.rowId === rowId);
    rows.push(
      <GridRow
        key={rowId}
        rowId={rowId}
        index={index}
        rowHeight={rowHeight}
        version={props.version}
        layoutKey={layoutKey}
        columns={columns}
        widths={widths}
        offsets={offsets}
        totalWidth={totalWidth}
        model={props.model}
        people={props.people}
        editable={canEdit}
        createsOptions={props.editable && props.onCreateOption !== undefined}
        rowMenus={props.rowMenus}
        activeKey={index === activeRow && hasActive ? columns[activeCol]!.key : null}
        editing={editing && editing.rowId === rowId ? editing : null}
        peersKey={rowPeers.map((peer) => `${peer.key}:${peer.name}:${peer.color}`).join('|')}
        peers={rowPeers}
        handlers={handlers}
        suggestions={suggestions.byRow.get(rowId) ?? null}
        suggestionsKey={suggesting ? `${suggestions.key}:${actionsLeft}:${props.canDecide === true}` : ''}
        actionsLeft={actionsLeft}
        canDecide={props.canDecide === true}
        myId={props.myId}
        runMark={rowMarkOf(highlight, rowId)}
      />,
    );
  }
  // Few, and at the end: drawn whatever the scroll position.
  suggestions.created.forEach((suggestion, i) =>
    rows.push(
      <GhostRow
        key={`suggested:${suggestion.id}`}
        suggestion={suggestion}
        index={rowIds.length + i}
        rowHeight={rowHeight}
        columns={columns}
        widths={widths}
        offsets={offsets}
        totalWidth={totalWidth}
        actionsLeft={actionsLeft}
        people={props.people}
        canDecide={props.canDecide === true}
        myId={props.myId}
        onDecide={(s, decision) => handlers.current.decide(s, decision)}
      />,
    ),
  );

  return (
    <div
      class={`grid-scroll ${rowHeight > ROW_HEIGHT ? 'has-tall-rows' : ''}`}
      style={{ '--row-height': `${rowHeight}px`, '--row-lines': String(Math.max(1, Math.floor((rowHeight - 14) / 20))) }}
      ref={scroller}
      tabIndex={0}
      role="grid"
      aria-label="Table"
      aria-rowcount={rowIds.length + 1}
      aria-colcount={columns.length + 1}
      aria-readonly={!props.editable}
      onScroll={onScroll}
      onKeyDown={onKeyDown}
    >
      <div class="grid-canvas" style={{ height: `${HEADER_HEIGHT + bodyHeight + (props.editable ? rowHeight + 24 : 24)}px`, width: `${totalWidth}px` }}>
        <div class="grid-header" role="row" aria-rowindex={1} style={{ width: `${totalWidth}px` }}>
          <div class="grid-gutter grid-corner" />
          {columns.map((column, col) => (
            <div key={column.id} role="columnheader" class={`grid-header-cell ${col === 0 ? 'is-frozen' : ''}`} style={{ left: `${offsets[col]}px`, width: `${widths[col]}px` }}>
              <button
                class="header-button"
                tabIndex={-1}
                aria-haspopup="menu"
                title={column.description ?? column.label}
                onClick={(event) => props.onHeaderMenu(column, event.currentTarget as HTMLElement)}
              >
                <Icon name={TYPE_LABELS[column.type]?.icon ?? 'text'} size={14} />
                <span class="header-label">{column.label}</span>
              </button>
              {props.editable && <ResizeHandle width={widths[col]!} onResize={(width) => props.onResizeColumn(column, width)} />}
            </div>
          ))}
          {suggesting && (
            <div role="columnheader" class="grid-header-cell grid-suggestions-header" style={{ left: `${actionsLeft}px`, width: `${SUGGESTION_COLUMN_WIDTH}px` }}>
              <span class="header-label">Suggestions</span>
            </div>
          )}
          {props.editable && (
            <div class="grid-header-cell grid-add-column" style={{ left: `${totalWidth - ADD_COLUMN_WIDTH}px`, width: `${ADD_COLUMN_WIDTH}px` }}>
              <button class="header-button" aria-label="Add a column" title="Add a column" onClick={(event) => props.onAddColumn(event.currentTarget as HTMLElement)}>
                <Icon name="plus" />
              </button>
            </div>
          )}
        </div>
        {rows}
        {props.editable && (
          <button class="grid-add-row" style={{ transform: `translateY(${HEADER_HEIGHT + bodyHeight}px)` }} onClick={() => props.onAddRow()}>
            <Icon name="plus" size={14} />
            <span>New row</span>
          </button>
        )}
      </div>
    </div>
  );
}

interface RowHandlers {
  select: (rowId: string, key: string) => void;
  edit: () => void;
  toggle: (rowId: string, key: string, value: ShownValue | undefined) => void;
  rowMenu: (rowId: string, anchor: HTMLElement) => void;
  finishEdit: (value: CellValue | undefined, exit: EditExit) => void;
  createOption: (column: ColumnDef, label: string) => string | null;
  decide: Decide;
  hover: (rowId: string, key: string, cell: HTMLElement) => void;
}

interface GridRowProps {
  rowId: string;
  index: number;
  rowHeight: number;
  version: number;
  /** Column ids, keys, types, widths and labels in one string: the row re-renders when it changes. */
  layoutKey: string;
  columns: ColumnDef[];
  widths: number[];
  offsets: number[];
  totalWidth: number;
  model: TableModel;
  people: PeopleDirectory;
  editable: boolean;
  /** Whether a cell editor may add a typed value to a column's options. */
  createsOptions: boolean;
  rowMenus: boolean;
  activeKey: string | null;
  editing: { rowId: string; key: string; initialText?: string } | null;
  peersKey: string;
  peers: PeerCell[];
  handlers: { current: RowHandlers };
  /** Open update and delete suggestions of this row, oldest first; the first is shown. */
  suggestions: RowSuggestionEntry[] | null;
  suggestionsKey: string;
  actionsLeft: number;
  canDecide: boolean;
  myId?: string;
  /** What the run chosen in the Activity panel changed here (run-highlight.ts): '' nothing, '*' the whole row, else the keys of its cells. */
  runMark: string;
}

const ROW_PROPS_SHOWN: Array<keyof GridRowProps> = ['rowId', 'index', 'rowHeight', 'version', 'layoutKey', 'totalWidth', 'people', 'editable', 'createsOptions', 'rowMenus', 'activeKey', 'editing', 'peersKey', 'suggestionsKey', 'runMark'];

class GridRow extends Component<GridRowProps> {
  override shouldComponentUpdate(next: GridRowProps) {
    return ROW_PROPS_SHOWN.some((name) => next[name] !== this.props[name]);
  }

  override render() {
    const { rowId, index, columns, widths, offsets, handlers, editing } = this.props;
    const data = this.props.model.row(rowId) ?? {};
    const suggestion = this.props.suggestions?.[0] ?? null;
    const suggested = suggestion?.kind === 'update' ? suggestion.values ?? {} : {};
    const { runMark } = this.props;
    const runCells = runMark === '' || runMark === '*' ? null : new Set(runMark.split(','));
    return (
      <div class={`grid-row ${this.props.activeKey !== null ? 'is-active-row' : ''} ${editing ? 'is-editing' : ''} ${suggestion ? `is-suggested-${suggestion.kind}` : ''} ${runMark === '*' ? 'is-run-row' : ''}`} role="row" aria-rowindex={index + 2} data-row-id={rowId} style={{ transform: `translateY(${HEADER_HEIGHT + index * this.props.rowHeight}px)`, width: `${this.props.totalWidth}px` }}>
        <div class="grid-gutter" role="rowheader">
          <span class="row-number">{index + 1}</span>
          {this.props.rowMenus && (
            <button
              class="row-menu-button"
              tabIndex={-1}
              aria-label={`Row ${index + 1} options`}
              onMouseDown={(event) => event.stopPropagation()}
              onClick={(event) => handlers.current.rowMenu(rowId, event.currentTarget as HTMLElement)}
            >
              <Icon name="more" size={14} />
            </button>
          )}
        </div>
        {columns.map((column, col) => {
          const value = data[column.key];
          const isActive = this.props.activeKey === column.key;
          const peer = this.props.peers.find((p) => p.key === column.key);
          const isEditing = editing !== null && editing.key === column.key;
          return (
            <div
              key={column.id}
              role="gridcell"
              aria-colindex={col + 2}
              aria-selected={isActive}
              data-key={column.key}
              class={`grid-cell type-${column.type}${column.resultType ? ` result-${column.resultType}` : ''} ${col === 0 ? 'is-frozen' : ''} ${isActive ? 'is-active' : ''} ${peer ? 'has-peer' : ''} ${runCells?.has(column.key) ? 'is-run-cell' : ''}`}
              style={{ left: `${offsets[col]}px`, width: `${widths[col]}px`, ...(peer ? { '--peer': peer.color } : {}) }}
              onMouseDown={(event) => {
                if ((event.target as HTMLElement).closest('.cell-editor')) return;
                event.preventDefault();
                handlers.current.select(rowId, column.key);
              }}
              onDblClick={() => handlers.current.edit()}
              onMouseEnter={(event) => handlers.current.hover(rowId, column.key, event.currentTarget as HTMLElement)}
            >
              {suggestion && Object.hasOwn(suggested, column.key) ? (
                <SuggestedCell column={column} now={value} suggestion={suggestion} people={this.props.people} />
              ) : column.type === 'checkbox' ? (
                <span
                  class={`checkbox ${value === true ? 'is-checked' : ''}`}
                  role="checkbox"
                  aria-checked={value === true}
                  aria-label={column.label}
                  onClick={() => this.props.editable && handlers.current.toggle(rowId, column.key, value)}
                >
                  {value === true && <Icon name="check" size={12} />}
                </span>
              ) : (
                <span class="cell-content">
                  <CellDisplay column={column} value={value} people={this.props.people} />
                </span>
              )}
              {peer && <span class="peer-tag">{peer.name}</span>}
              {isEditing && (
                <CellEditor
                  column={column}
                  value={value}
                  initialText={editing!.initialText}
                  people={this.props.people}
                  commit={(next, exit) => handlers.current.finishEdit(next, exit)}
                  createOption={this.props.createsOptions ? (label) => handlers.current.createOption(column, label) : undefined}
                  cancel={() => handlers.current.finishEdit(undefined, 'stay')}
                />
              )}
            </div>
          );
        })}
        {suggestion && (
          <SuggestionActions suggestion={suggestion} more={this.props.suggestions!.length - 1} canDecide={this.props.canDecide} myId={this.props.myId} onDecide={handlers.current.decide} left={this.props.actionsLeft} />
        )}
      </div>
    );
  }
}

/** A suggested new row: its cells as suggested, tinted, not editable until accepted. */
function GhostRow(props: {
  suggestion: RowSuggestionEntry;
  index: number;
  rowHeight: number;
  columns: ColumnDef[];
  widths: number[];
  offsets: number[];
  totalWidth: number;
  actionsLeft: number;
  people: PeopleDirectory;
  canDecide: boolean;
  myId?: string;
  onDecide: Decide;
}) {
  const { suggestion, columns } = props;
  return (
    <div
      class="grid-row is-suggested-create"
      role="row"
      aria-rowindex={props.index + 2}
      data-suggestion-id={suggestion.id}
      style={{ transform: `translateY(${HEADER_HEIGHT + props.index * props.rowHeight}px)`, width: `${props.totalWidth}px` }}
    >
      <div class="grid-gutter" role="rowheader">
        <span class="row-number">+</span>
      </div>
      {columns.map((column, col) => (
        <div key={column.id} role="gridcell" aria-colindex={col + 2} data-key={column.key} class={`grid-cell type-${column.type} ${col === 0 ? 'is-frozen' : ''}`} style={{ left: `${props.offsets[col]}px`, width: `${props.widths[col]}px` }}>
          {Object.hasOwn(suggestion.values ?? {}, column.key) && <GhostCell column={column} value={suggestion.values![column.key] as ShownValue} people={props.people} />}
        </div>
      ))}
      <SuggestionActions suggestion={suggestion} more={0} canDecide={props.canDecide} myId={props.myId} onDecide={props.onDecide} left={props.actionsLeft} />
    </div>
  );
}

/** Drag the header's right edge to resize; the width is written once, when the drag ends. */
function ResizeHandle(props: { width: number; onResize: (width: number) => void }) {
  const [dragWidth, setDragWidth] = useState<number | null>(null);
  return (
    <span
      class={`resize-handle ${dragWidth !== null ? 'is-dragging' : ''}`}
      style={dragWidth !== null ? { transform: `translateX(${dragWidth - props.width}px)` } : undefined}
      onPointerDown={(event) => {
        event.preventDefault();
        event.stopPropagation();
        const startX = event.clientX;
        const target = event.currentTarget as HTMLElement;
        target.setPointerCapture(event.pointerId);
        let width = props.width;
        const onMove = (move: PointerEvent) => {
          width = Math.max(60, Math.min(1200, Math.round(props.width + move.clientX - startX)));
          setDragWidth(width);
        };
        const onUp = () => {
          target.removeEventListener('pointermove', onMove);
          target.removeEventListener('pointerup', onUp);
          setDragWidth(null);
          if (width !== props.width) props.onResize(width);
        };
        target.addEventListener('pointermove', onMove);
        target.addEventListener('pointerup', onUp);
      }}
    />
  );
}
