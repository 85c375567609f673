import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { NEVER_TRUE, useStore } from '../lib/store';
import { useLocation } from '../lib/router';
import { usePeers } from '../sync/use-document';
import { Icon } from '../ui/icons';
import { Button, Dialog, IconButton, Menu, Spinner, type MenuItem } from '../ui/primitives';
import { Popover } from '../ui/Popover';
import { showError } from '../ui/toast';
import { RenameDialog } from '../ui/RenameDialog';
import type { SurfaceViewProps } from '../workspace-context/context';
import { TYPE_LABELS, type PeopleDirectory } from './cells';
import { Grid, type CellAddress, type PeerCell } from './Grid';
import { OptionsDialog, optionFromLabel } from './OptionsDialog';
import { COLUMN_TYPES, LINKING_TYPES, TableModel, type ColumnDef, type ColumnType, type RowData, type RowFilter, type ViewDef, type ViewKind } from './table-model';
import { AddLinkFields, sheetDirectory, withLinks, type ColumnPointers } from './links';
import { FormDialog } from '../ui/FormDialog';
import { confirmDialog, promptDialog } from '../ui/dialogs';
import { Board } from './Board';
import { NewViewDialog, PLAIN_GRID, ViewBar, type NewViewFields } from './ViewBar';
import { countConditions, FieldsPanel, FilterPanel, SortPanel } from './ViewControls';
import { nextDraft, readStored, shownQuery, useStoredDrafts, writeStored, type ViewDraft } from './view-draft';
import { CsvTools } from './CsvImport';
import { cellWritersOf } from './cell-writers';
import { lazy } from '../ui/lazy';

// The other kinds of view and the formula editor come with their first use, not with every table page (docs/WEB.md "Loading").
const FormulaEditor = lazy(() => import('./FormulaEditor').then((m) => m.FormulaEditor), 'the formula editor');
const Calendar = lazy(() => import('./Calendar').then((m) => m.Calendar), 'the calendar');
const Timeline = lazy(() => import('./Timeline').then((m) => m.Timeline), 'the timeline');
const Gallery = lazy(() => import('./Gallery').then((m) => m.Gallery), 'the gallery');
const FormBuilder = lazy(() => import('./FormBuilder').then((m) => m.FormBuilder), 'the form builder');

type OpenMenu =
  | { kind: 'header'; column: ColumnDef; anchor: HTMLElement }
  | { kind: 'row'; rowId: string; anchor: HTMLElement }
  | { kind: 'hidden'; anchor: HTMLElement }
  | { kind: 'view'; view: ViewDef; anchor: HTMLElement }
  | { kind: 'lanes'; view: ViewDef; anchor: HTMLElement };
type OpenDialog = { kind: 'rename'; column: ColumnDef } | { kind: 'options'; column: ColumnDef } | { kind: 'formula'; column: ColumnDef } | { kind: 'add-column' } | { kind: 'new-view' | 'save-as-view' } | { kind: 'rename-view'; view: ViewDef } | null;
/** `startWith`: the column a filter panel opened from a column's menu adds a condition on. */
type OpenPanel = { kind: 'filter' | 'sort' | 'fields'; anchor: HTMLElement; startWith?: string } | null;

/** Row heights of a grid view, in pixels. */
const ROW_HEIGHTS = { short: 36, medium: 60, tall: 92, extra: 132 } as const;

/** A table surface: its sheet of the workspace's table document, live. */
export function TableSurface(props: SurfaceViewProps) {
  const { document, surface, context } = props;
  const model = useMemo(() => (document ? new TableModel(document.doc) : null), [document]);
  const undo = useMemo(() => model?.createUndoManager() ?? null, [model]);
  const [version, setVersion] = useState(0);
  const [ready, setReady] = useState(false);
  const [active, setActive] = useState<CellAddress | null>(null);
  const [menu, setMenu] = useState<OpenMenu | null>(null);
  const [dialog, setDialog] = useState<OpenDialog>(null);
  const synced = useStore(document?.synced ?? NEVER_TRUE);
  const peers = usePeers(document);
  const editable = context.abilities.edit;
  // A commenter's edits become suggestions an editor accepts or rejects (docs/SUGGESTIONS.md "Tables").
  const suggesting = !editable && context.abilities.comment;
  const myName = context.members.find((member) => member.principal.id === props.myId)?.principal.name ?? 'Me';
  const me = { principalType: 'user' as const, id: props.myId, name: myName };
  const [panel, setPanel] = useState<OpenPanel>(null);
  // Each person's current view of this sheet, on this device (PLAIN_GRID for the grid without a view; null: never picked).
  const storageKey = `trellis:view:${props.myId}:${context.workspace.id}:${surface.id}`;
  const [picked, setPicked] = useState<string | null>(() => readStored(storageKey));
  // Each person's unsaved filter and sort, per view (docs/TABLES.md "In the web app": "Sort and filter on any table").
  const drafts = useStoredDrafts(`trellis:view-draft:${props.myId}:${context.workspace.id}:${surface.id}:`);
  // Where someone who never picked lands: the first view as the table first arrived, kept, so a view a peer adds later does not switch their grid.
  const landed = useRef<string | null>(null);
  // Rows added here while a view is on show stay visible though they do not match its filter yet (an empty new row rarely does).
  const [kept, setKept] = useState<{ viewId: string; rowIds: Set<string> }>({ viewId: '', rowIds: new Set() });
  const viewRows = useRef<{ key: string; sheet: readonly string[]; rowIds: string[]; ignored: number } | null>(null);

  useEffect(() => {
    if (!model || !document) return;
    let frame = 0;
    const off = model.onChange(() => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setVersion((v) => v + 1)));
    });
    void document.localReady.then(() => setReady(true));
    return () => {
      off();
      cancelAnimationFrame(frame);
    };
  }, [model]);

  useEffect(() => () => undo?.destroy(), [undo]);

  // A search hit links to `?row={id}`: that row becomes the active one (the grid scrolls to it).
  const { search } = useLocation();
  const linkedRow = new URLSearchParams(search).get('row');
  const rowInDocument = Boolean(linkedRow && model?.row(linkedRow));
  useEffect(() => {
    if (!model || !linkedRow || !rowInDocument) return;
    const first = model.columns(surface.id).find((column) => !column.hidden);
    if (first) setActive({ rowId: linkedRow, key: first.key });
  }, [model, linkedRow, rowInDocument]);

  // Presence: which cell this tab is on, for the others' grids.
  useEffect(() => {
    document?.provider.awareness?.setLocalStateField('cell', active ? { surfaceId: surface.id, ...active } : null);
  }, [document, active?.rowId, active?.key, surface.id]);
  useEffect(() => () => document?.provider.awareness?.setLocalStateField('cell', null), [document]);

  const cellWriters = useMemo(() => cellWritersOf(context.workspace.org.slug, context.workspace.slug), [context.workspace.org.slug, context.workspace.slug]);
  const people: PeopleDirectory = useMemo(() => {
    const directory: PeopleDirectory = new Map();
    for (const member of context.members) {
      directory.set(member.principal.id, { id: member.principal.id, name: member.principal.name, avatarUrl: member.principal.avatarUrl, kind: member.principalType });
      for (const agent of member.inheritedAgents ?? []) directory.set(agent.id, { id: agent.id, name: agent.name, avatarUrl: agent.avatarUrl, kind: 'agent' });
    }
    return directory;
  }, [context.members]);

  if (!model || !document || (!ready && !synced)) return <Spinner label="Opening the table…" />;

  const views = model.views(surface.id);
  if (landed.current === null && synced) landed.current = views[0]?.id ?? PLAIN_GRID;
  const view = currentView(views, picked, landed.current ?? views[0]?.id ?? PLAIN_GRID);
  const pick = (viewId: string) => {
    setPicked(viewId);
    setPanel(null);
    setActive(null);
    writeStored(storageKey, viewId);
  };

  const allColumns = model.columns(surface.id);
  const ordered = view ? orderedColumns(allColumns, view.columnOrder) : allColumns;
  const columns = view ? ordered.filter((column) => !view.hiddenColumns.includes(column.key)) : allColumns.filter((column) => !column.hidden);
  const hidden = view ? ordered.filter((column) => view.hiddenColumns.includes(column.key)) : allColumns.filter((column) => column.hidden);
  const sheetRowIds = model.rowIds(surface.id);
  // What is on show: the view (or the plain grid) with this person's unsaved filter and sort over it.
  const viewKey = view?.id ?? PLAIN_GRID;
  const draft = drafts.get(viewKey);
  const query = shownQuery(view, draft);
  const changeQuery = (change: ViewDraft) => drafts.set(viewKey, nextDraft(view, draft, change));
  const unsaved = query.unsaved.filter || query.unsaved.sort;
  const keptRows = kept.viewId === viewKey ? kept.rowIds : null;
  let rowIds: readonly string[] = sheetRowIds;
  let ignoredConditions = 0;
  if (query.filter || query.sort.length > 0) {
    const key = `${viewKey}|${version}|${JSON.stringify(query.filter)}|${JSON.stringify(query.sort)}|${keptRows?.size ?? 0}`;
    if (viewRows.current?.key !== key || viewRows.current.sheet !== sheetRowIds) {
      viewRows.current = { key, sheet: sheetRowIds, ...model.rowsOfView(surface.id, query, keptRows ?? undefined) };
    }
    rowIds = viewRows.current.rowIds;
    ignoredConditions = viewRows.current.ignored;
  }
  const sorted = query.sort.length > 0;
  const conditions = countConditions(query.filter);
  const filtered = conditions > 0;
  const dateColumn = view?.kind === 'calendar' || view?.kind === 'timeline' ? allColumns.find((column) => column.key === view.dateColumn && column.type === 'date') : undefined;
  const endDateColumn = dateColumn ? (allColumns.find((column) => column.key === view?.endDateColumn && column.type === 'date') ?? null) : null;
  const lanesColumn = view?.kind === 'board' ? allColumns.find((column) => column.key === view.groupBy && column.type === 'status') : undefined;
  const peerCells: PeerCell[] = peers.flatMap((peer) => {
    const cell = peer.state.cell as { surfaceId?: string; rowId?: string; key?: string } | null | undefined;
    return cell?.surfaceId === surface.id && cell.rowId && cell.key ? [{ rowId: cell.rowId, key: cell.key, name: peer.user.name, color: peer.user.color }] : [];
  });
  const sheets = props.surfaces.filter((other) => other.kind === 'table' && other.id !== surface.id);

  const run = (change: () => void) => {
    try {
      change();
    } catch (error) {
      showError(error);
    }
  };

  /** A new row; in a filtered grid it starts with the values the filter asks for, where it names them. */
  const newRow = (data: RowData, position?: number) => {
    const id = model.addRow(surface.id, { ...valuesOf(query.filter, allColumns), ...data }, position);
    if (filtered || sorted) setKept((current) => ({ viewId: viewKey, rowIds: new Set(current.viewId === viewKey ? [...current.rowIds, id] : [id]) }));
    return id;
  };

  const addRow = (afterRowId?: string) =>
    run(() => {
      const position = afterRowId ? sheetRowIds.indexOf(afterRowId) + 1 : undefined;
      const id = newRow({}, position);
      const first = columns[0];
      if (first) setActive({ rowId: id, key: first.key });
      // The grid takes the keys at once, not at the next frame: until then they went to the New row button, and a
      // space or Enter typed in that gap (a busy browser draws its next frame late) clicked it again, adding a row
      // for each. The grid has rendered the new row, active, before the next key arrives (a render is a microtask).
      window.document.querySelector<HTMLElement>('.grid-scroll')?.focus({ preventScroll: true });
      requestAnimationFrame(() => {
        const scroller = window.document.querySelector<HTMLElement>('.grid-scroll');
        if (scroller && position === undefined && !sorted) scroller.scrollTop = scroller.scrollHeight;
        // Focus lost since (the menu or the empty sheet's button it was in went away): back to the grid. Focus
        // anywhere else stays, above all in the cell editor the keys typed meanwhile have opened.
        const focused = window.document.activeElement;
        if (!focused || focused === window.document.body) scroller?.focus({ preventScroll: true });
      });
    });

  /** A commenter's new row: its first column's text, asked for, suggested at the tail. */
  const suggestRow = () => {
    const first = columns[0];
    void promptDialog({ title: 'Suggest a row', label: first?.label ?? 'Title' }).then((text) => {
      if (text === null) return;
      run(() => model.suggestRow(surface.id, first && text.trim() ? { [first.key]: text.trim() } : {}, me));
    });
  };

  const addCard = (lane: string | null) =>
    void promptDialog({ title: 'New card', label: columns.find((column) => column.key !== lanesColumn?.key)?.label ?? 'Title' }).then((title) => {
      if (title === null) return;
      const titleColumn = columns.find((column) => column.key !== lanesColumn?.key);
      run(() => newRow({ ...(titleColumn && title.trim() ? { [titleColumn.key]: title.trim() } : {}), ...(lanesColumn ? { [lanesColumn.key]: lane } : {}) }));
    });

  /** Moves a column among the shown ones: in a view the view's order changes, in the plain grid the sheet's. */
  const moveShownColumn = (column: ColumnDef, by: -1 | 1) => {
    if (!view) {
      const index = allColumns.findIndex((c) => c.id === column.id);
      return run(() => model.moveColumn(surface.id, column.id, index + by));
    }
    const neighbour = columns[columns.findIndex((c) => c.key === column.key) + by];
    if (!neighbour) return;
    const keys = ordered.map((c) => c.key).filter((key) => key !== column.key);
    keys.splice(keys.indexOf(neighbour.key) + (by > 0 ? 1 : 0), 0, column.key);
    run(() => model.updateView(view.id, { columnOrder: keys }));
  };

  /** A value typed into a status or select cell that no option has: added to the column's options, for everyone. */
  const createOption = (column: ColumnDef, label: string): string | null => {
    const options = model.columns(surface.id).find((c) => c.id === column.id)?.options ?? [];
    const option = optionFromLabel(label, options);
    try {
      model.updateColumn(surface.id, column.id, { options: [...options, option] });
      return option.value;
    } catch (error) {
      showError(error);
      return null;
    }
  };

  const hideColumn = (column: ColumnDef, hide: boolean) =>
    run(() =>
      view
        ? model.updateView(view.id, { hiddenColumns: hide ? [...view.hiddenColumns, column.key] : view.hiddenColumns.filter((key) => key !== column.key) })
        : model.updateColumn(surface.id, column.id, { hidden: hide }),
    );

  const createView = (fields: NewViewFields) => {
    // A new view starts as the grid looks now: the sheet's hidden columns stay hidden in it.
    const created = model.createView(surface.id, { ...fields, hiddenColumns: allColumns.filter((column) => column.hidden).map((column) => column.key) });
    pick(created.id);
  };

  /** What is on show, this person's filter and sort included, as a new view for everyone; the draft it came from is done. */
  const saveAsView = (fields: NewViewFields) => {
    const layout = view
      ? { hiddenColumns: view.hiddenColumns, columnOrder: view.columnOrder, rowHeight: view.rowHeight }
      : { hiddenColumns: allColumns.filter((column) => column.hidden).map((column) => column.key) };
    const created = model.createView(surface.id, { ...fields, ...layout, filter: query.filter, sort: query.sort });
    drafts.set(viewKey, null);
    pick(created.id);
  };

  /** Saves this person's filter and sort into the view on show, for everyone. */
  const updateShownView = (shown: ViewDef) =>
    run(() => {
      model.updateView(shown.id, { filter: query.filter, sort: query.sort });
      drafts.set(viewKey, null);
    });

  const viewItems = (shown: ViewDef): MenuItem[] => [
    { label: 'Rename…', icon: 'edit', onSelect: () => setDialog({ kind: 'rename-view', view: shown }) },
    ...(shown.kind === 'board' ? [] : [{ label: 'Duplicate', icon: 'copy', onSelect: () => run(() => createView({ name: `${shown.name} copy`, kind: shown.kind, groupBy: shown.groupBy, dateColumn: shown.dateColumn, endDateColumn: shown.endDateColumn, coverColumn: shown.coverColumn, cardFields: shown.cardFields, form: shown.form && { ...shown.form, open: false } })) }]),
    { separator: true, label: '' },
    {
      label: 'Delete view',
      icon: 'trash',
      danger: true,
      onSelect: () =>
        void confirmDialog({ title: 'Delete view?', message: `The view “${shown.name}” goes away for everyone; the rows stay.`, confirmLabel: 'Delete view', danger: true }).then(
          (confirmed) => confirmed && run(() => model.deleteView(shown.id)),
        ),
    },
  ];

  /** Sort and filter by a column: everyone's own, so in every column menu, the only items of someone who cannot edit. */
  const queryItems = (column: ColumnDef, anchor: HTMLElement): MenuItem[] => [
    { label: 'Sort ascending', icon: 'sort', onSelect: () => changeQuery({ sort: [{ column: column.key, direction: 'asc' }] }) },
    { label: 'Sort descending', icon: 'sort', onSelect: () => changeQuery({ sort: [{ column: column.key, direction: 'desc' }] }) },
    { label: 'Filter by this column…', icon: 'filter', onSelect: () => setPanel({ kind: 'filter', anchor, startWith: column.key }) },
  ];

  const headerItems = (column: ColumnDef, anchor: HTMLElement): MenuItem[] => {
    if (!editable) return queryItems(column, anchor);
    const index = (view ? columns : allColumns).findIndex((c) => c.id === column.id);
    return [
      ...queryItems(column, anchor),
      { separator: true, label: '' },
      { label: 'Rename…', icon: 'edit', onSelect: () => setDialog({ kind: 'rename', column }) },
      {
        label: 'Type',
        icon: TYPE_LABELS[column.type]?.icon ?? 'text',
        hint: TYPE_LABELS[column.type]?.label,
        // A link or lookup is made in the add-column dialog, where it names what it points at.
        submenu: COLUMN_TYPES.filter((type) => !LINKING_TYPES.has(type) || type === column.type).map((type) => ({
          label: TYPE_LABELS[type]?.label ?? type,
          checked: column.type === type,
          onSelect: () => run(() => model.updateColumn(surface.id, column.id, { type, ...(needsOptions(type) && !column.options ? { options: [] } : {}) })),
        })),
      },
      ...(needsOptions(column.type) ? [{ label: 'Edit options…', icon: 'select', onSelect: () => setDialog({ kind: 'options', column }) }] : []),
      ...(column.type === 'formula' ? [{ label: 'Edit formula…', icon: 'formula', onSelect: () => setDialog({ kind: 'formula', column }) }] : []),
      { separator: true, label: '' },
      { label: 'Move left', icon: 'arrowLeft', disabled: index <= 0, onSelect: () => moveShownColumn(column, -1) },
      { label: 'Move right', icon: 'arrowRight', disabled: index >= (view ? columns : allColumns).length - 1, onSelect: () => moveShownColumn(column, 1) },
      { label: view ? 'Hide in this view' : 'Hide', icon: 'eyeOff', onSelect: () => hideColumn(column, true) },
      { separator: true, label: '' },
      {
        label: 'Delete column',
        icon: 'trash',
        danger: true,
        onSelect: () =>
          void confirmDialog({ title: 'Delete column?', message: `The column “${column.label}” goes away; its values stay in the rows.`, confirmLabel: 'Delete column', danger: true }).then(
            (confirmed) => confirmed && run(() => model.removeColumn(surface.id, column.id)),
          ),
      },
    ];
  };

  const commentItems = (rowId: string): MenuItem[] => {
    if (!context.abilities.comment) return [];
    const title = rowTitle(rowId);
    const cell = active?.rowId === rowId ? columns.find((column) => column.key === active.key) : undefined;
    return [
      { label: 'Comment on row', icon: 'comment', onSelect: () => context.openPanel({ kind: 'comments', focus: { target: { type: 'row', rowId }, label: title } }) },
      ...(cell
        ? [{ label: `Comment on “${cell.label}”`, icon: 'comment', onSelect: () => context.openPanel({ kind: 'comments', focus: { target: { type: 'cell', rowId, columnKey: cell.key }, label: `${title} · ${cell.label}` } }) }]
        : []),
    ];
  };

  /** How a row reads in the comments panel: its first column's text. */
  const rowTitle = (rowId: string) => {
    const first = columns[0];
    const value = first ? model.row(rowId)?.[first.key] : undefined;
    const text = value === undefined || value === null || value === '' ? '' : Array.isArray(value) ? value.join(', ') : String(value);
    return text || `Row ${rowIds.indexOf(rowId) + 1}`;
  };

  const rowItems = (rowId: string): MenuItem[] => {
    // Positions are the sheet's own order, which a filtered or sorted view does not show.
    const index = sheetRowIds.indexOf(rowId);
    if (!editable) {
      const suggest: MenuItem[] = suggesting ? [{ separator: true, label: '' }, { label: 'Suggest deleting this row', icon: 'trash', onSelect: () => run(() => model.suggestDelete(rowId, me)) }] : [];
      return [...commentItems(rowId), ...suggest];
    }
    const orderHint = sorted ? 'sorted' : undefined;
    return [
      ...commentItems(rowId),
      ...(context.abilities.comment ? [{ separator: true, label: '' }] : []),
      { label: 'Insert above', icon: 'plus', onSelect: () => run(() => newRow({}, Math.max(0, index))) },
      { label: 'Insert below', icon: 'plus', onSelect: () => addRow(rowId) },
      { label: 'Move up', icon: 'chevronUp', disabled: index <= 0 || sorted, hint: orderHint, onSelect: () => run(() => model.moveRowTo(rowId, index - 1)) },
      { label: 'Move down', icon: 'chevronDown', disabled: index >= sheetRowIds.length - 1 || sorted, hint: orderHint, onSelect: () => run(() => model.moveRowTo(rowId, index + 1)) },
      {
        label: 'Move to',
        icon: 'move',
        disabled: sheets.length === 0,
        hint: sheets.length === 0 ? 'no other table' : undefined,
        submenu: sheets.map((sheet) => ({ label: sheet.name, icon: 'table', onSelect: () => run(() => model.moveRowToSheet(rowId, sheet.id)) })),
      },
      { separator: true, label: '' },
      { label: 'Delete row', icon: 'trash', danger: true, onSelect: () => run(() => model.deleteRow(rowId)) },
    ];
  };

  const togglePanel = (kind: 'filter' | 'sort' | 'fields') => (event: MouseEvent) =>
    setPanel(panel?.kind === kind ? null : { kind, anchor: event.currentTarget as HTMLElement });

  // Link cells read the linked rows' titles and their target sheets from here (links.tsx).
  return withLinks(
    { model, surfaces: props.surfaces },
    <div class="table-surface">
      <ViewBar
        views={views}
        currentId={viewKey}
        unsaved={unsaved}
        editable={editable}
        onPick={pick}
        onNew={() => setDialog({ kind: 'new-view' })}
        onViewMenu={(shown, anchor) => setMenu({ kind: 'view', view: shown, anchor })}
      />
      <div class="table-toolbar">
        <span class="row-count" data-testid="row-count">
          {filtered ? `${rowIds.length.toLocaleString()} of ${sheetRowIds.length.toLocaleString()} rows` : `${rowIds.length.toLocaleString()} ${rowIds.length === 1 ? 'row' : 'rows'}`}
        </span>
        <Button variant="ghost" icon="filter" class={conditions ? 'is-on' : ''} aria-expanded={panel?.kind === 'filter'} onClick={togglePanel('filter')}>
          {conditions ? `Filtered by ${conditions}` : 'Filter'}
        </Button>
        <Button variant="ghost" icon="sort" class={sorted ? 'is-on' : ''} aria-expanded={panel?.kind === 'sort'} onClick={togglePanel('sort')}>
          {sorted ? `Sorted by ${query.sort.length}` : 'Sort'}
        </Button>
        {view && (
          <>
            <Button variant="ghost" icon="eyeOff" class={hidden.length ? 'is-on' : ''} aria-expanded={panel?.kind === 'fields'} onClick={togglePanel('fields')}>
              {hidden.length ? `${hidden.length} hidden` : 'Fields'}
            </Button>
            {view.kind === 'board' && (
              <Button variant="ghost" icon="board" disabled={!editable} onClick={(event) => setMenu({ kind: 'lanes', view, anchor: event.currentTarget as HTMLElement })}>
                {lanesColumn ? `Lanes: ${lanesColumn.label}` : 'Choose lanes'}
              </Button>
            )}
          </>
        )}
        {ignoredConditions > 0 && (
          <span class="badge badge-muted" title="Conditions on columns that are gone or changed type are left out">
            {ignoredConditions} {ignoredConditions === 1 ? 'condition' : 'conditions'} ignored
          </span>
        )}
        {unsaved && (
          <span class="view-draft" role="status" data-testid="unsaved-query">
            <span class="view-draft-note" title={view ? `Only you see this; “${view.name}” is unchanged for everyone` : 'Only you see this; the table is unchanged for everyone'}>
              {query.unsaved.filter && query.unsaved.sort ? 'Filter and sort not saved' : query.unsaved.filter ? 'Filter not saved' : 'Sort not saved'}
            </span>
            <Button variant="ghost" icon="undo" onClick={() => drafts.set(viewKey, null)}>
              Reset
            </Button>
            {view && editable && (
              <Button variant="ghost" onClick={() => updateShownView(view)} title={`Saves this filter and sort into “${view.name}” for everyone`}>
                Update view
              </Button>
            )}
            {editable && (
              <Button variant="ghost" onClick={() => setDialog({ kind: 'save-as-view' })}>
                Save as view
              </Button>
            )}
          </span>
        )}
        {!view && hidden.length > 0 && (
          <Button variant="ghost" icon="eyeOff" onClick={(event) => setMenu({ kind: 'hidden', anchor: event.currentTarget as HTMLElement })}>
            {hidden.length} hidden
          </Button>
        )}
        {/* The tools at the end wrap as one group (to a second line, on the right) when the toolbar runs out of room. */}
        <span class="table-toolbar-end">
          <CsvTools
            workspaceId={context.workspace.id}
            surface={surface}
            columns={allColumns}
            shown={view ? { viewId: view.id } : { columns: columns.map((column) => column.key) }}
            editable={editable}
          />
          {!editable && !suggesting && <span class="badge badge-muted">Read only</span>}
          {suggesting && (
            <>
              <span class="badge badge-muted" title="Your edits are suggestions: an editor accepts or rejects them">
                Suggesting
              </span>
              <Button icon="plus" onClick={() => suggestRow()}>
                Suggest row
              </Button>
            </>
          )}
          {editable && (
            <>
              <IconButton icon="undo" label="Undo (Ctrl+Z)" onClick={() => undo?.undo()} />
              <IconButton icon="redo" label="Redo (Ctrl+Shift+Z)" onClick={() => undo?.redo()} />
              <Button icon="plus" onClick={() => setDialog({ kind: 'add-column' })}>
                Column
              </Button>
              <Button variant="primary" icon="plus" onClick={() => addRow()}>
                New row
              </Button>
            </>
          )}
        </span>
      </div>
      {view?.kind === 'calendar' && dateColumn ? (
        <Calendar
          model={model}
          dateColumn={dateColumn}
          endDateColumn={endDateColumn}
          columns={columns}
          rowIds={rowIds}
          version={version}
          editable={editable}
          onItemMenu={(rowId, anchor) => setMenu({ kind: 'row', rowId, anchor })}
        />
      ) : view?.kind === 'timeline' && dateColumn ? (
        <Timeline
          model={model}
          dateColumn={dateColumn}
          endDateColumn={endDateColumn}
          laneColumn={allColumns.find((column) => column.key === view.groupBy && (column.type === 'status' || column.type === 'person')) ?? null}
          columns={columns}
          rowIds={rowIds}
          version={version}
          editable={editable}
          onBarMenu={(rowId, anchor) => setMenu({ kind: 'row', rowId, anchor })}
        />
      ) : view?.kind === 'form' ? (
        <FormBuilder model={model} view={view} columns={allColumns} editable={editable} workspaceId={context.workspace.id} />
      ) : view?.kind === 'gallery' ? (
        <Gallery
          model={model}
          workspaceId={context.workspace.id}
          viewId={view.id}
          coverColumn={allColumns.find((column) => column.key === view.coverColumn) ?? null}
          cardFields={(view.cardFields ?? []).flatMap((key) => allColumns.filter((column) => column.key === key))}
          columns={columns}
          rowIds={rowIds}
          version={version}
          people={people}
          onCardMenu={(rowId, anchor) => setMenu({ kind: 'row', rowId, anchor })}
        />
      ) : view?.kind === 'board' ? (
        lanesColumn ? (
          <Board
            model={model}
            groupBy={lanesColumn}
            columns={columns}
            rowIds={rowIds}
            version={version}
            editable={editable}
            people={people}
            onAddCard={addCard}
            onCardMenu={(rowId, anchor) => setMenu({ kind: 'row', rowId, anchor })}
          />
        ) : (
          <div class="grid-empty board-empty">
            <p>A board shows its rows in lanes, one per option of a status column. {editable ? 'Choose the column its lanes come from.' : 'An editor chooses the column its lanes come from.'}</p>
          </div>
        )
      ) : (
      <Grid
        model={model}
        rowHeight={view ? ROW_HEIGHTS[view.rowHeight] : undefined}
        surfaceId={surface.id}
        columns={columns}
        rowIds={rowIds}
        version={version}
        editable={editable}
        rowMenus={editable || context.abilities.comment}
        people={people}
        peers={peerCells}
        active={active}
        onActiveChange={setActive}
        onHeaderMenu={(column, anchor) => setMenu({ kind: 'header', column, anchor })}
        onRowMenu={(rowId, anchor) => setMenu({ kind: 'row', rowId, anchor })}
        onAddColumn={() => setDialog({ kind: 'add-column' })}
        onAddRow={addRow}
        onResizeColumn={(column, width) => run(() => model.updateColumn(surface.id, column.id, { width }))}
        onCreateOption={createOption}
        onUndo={() => undo?.undo()}
        onRedo={() => undo?.redo()}
        suggestions={model.suggestions(surface.id, props.myId)}
        canDecide={editable}
        myId={props.myId}
        onDecide={(suggestion, decision) => {
          if (decision === 'withdraw') return run(() => model.withdrawSuggestion(suggestion.id));
          // The server applies it (as this person's change) and the grid sees it arrive over sync.
          api('POST', `/api/suggestions/${encodeURIComponent(suggestion.id)}/${decision}`).catch(showError);
        }}
        suggesting={suggesting}
        onSuggestCell={(rowId, key, value) => run(() => model.suggestCell(rowId, key, value, me))}
        cellWriters={cellWriters}
      />
      )}
      {rowIds.length === 0 && filtered && (!view || view.kind === 'grid') && (
        <div class="grid-empty">
          <p>No rows match the filter.</p>
        </div>
      )}
      {sheetRowIds.length === 0 && (!view || view.kind === 'grid') && (
        <div class="grid-empty">
          <p>{editable ? 'No rows yet. Add one, or let an agent fill the table through the API.' : 'No rows yet.'}</p>
          {editable && (
            <Button variant="primary" icon="plus" onClick={() => addRow()}>
              New row
            </Button>
          )}
        </div>
      )}
      {menu?.kind === 'header' && <Menu anchor={menu.anchor} items={headerItems(menu.column, menu.anchor)} onClose={() => setMenu(null)} />}
      {menu?.kind === 'row' && <Menu anchor={menu.anchor} items={rowItems(menu.rowId)} onClose={() => setMenu(null)} />}
      {menu?.kind === 'hidden' && (
        <Menu
          anchor={menu.anchor}
          onClose={() => setMenu(null)}
          items={hidden.map((column) => ({ label: `Show ${column.label}`, icon: 'eye', disabled: !editable, onSelect: () => hideColumn(column, false) }))}
        />
      )}
      {menu?.kind === 'view' && <Menu anchor={menu.anchor} items={viewItems(menu.view)} onClose={() => setMenu(null)} />}
      {menu?.kind === 'lanes' && (
        <Menu
          anchor={menu.anchor}
          onClose={() => setMenu(null)}
          items={
            allColumns.some((column) => column.type === 'status')
              ? allColumns
                  .filter((column) => column.type === 'status')
                  .map((column) => ({ label: column.label, checked: column.key === menu.view.groupBy, onSelect: () => run(() => model.updateView(menu.view.id, { groupBy: column.key })) }))
              : [{ label: 'No status column yet', disabled: true }]
          }
        />
      )}
      {panel && (panel.kind !== 'fields' || view) && (
        <Popover anchor={panel.anchor} label={panel.kind === 'filter' ? 'Filter' : panel.kind === 'sort' ? 'Sort' : 'Fields'} onClose={() => setPanel(null)}>
          {panel.kind === 'filter' && <FilterPanel key={`${viewKey}:${panel.startWith ?? ''}`} filter={query.filter} columns={allColumns} people={people} startWith={panel.startWith} onSave={(filter) => changeQuery({ filter })} />}
          {panel.kind === 'sort' && <SortPanel sort={query.sort} columns={allColumns} onSave={(sort) => changeQuery({ sort })} />}
          {panel.kind === 'fields' && view && <FieldsPanel view={view} ordered={ordered} editable={editable} onSave={(patch) => run(() => model.updateView(view.id, patch))} />}
        </Popover>
      )}
      {dialog?.kind === 'new-view' && (
        <NewViewDialog
          columns={allColumns}
          suggestedName={(kind) => uniqueName(kind === 'grid' ? 'Grid view' : `${kind[0]!.toUpperCase()}${kind.slice(1)}`, views)}
          onClose={() => setDialog(null)}
          onCreate={createView}
        />
      )}
      {dialog?.kind === 'save-as-view' && (
        <NewViewDialog
          title="Save as view"
          submitLabel="Save view"
          initialKind={view?.kind}
          initialGroupBy={view?.groupBy}
          columns={allColumns}
          suggestedName={(kind) => uniqueName(view ? `${view.name} copy` : kind === 'board' ? 'Board' : 'Grid view', views)}
          onClose={() => setDialog(null)}
          onCreate={saveAsView}
        />
      )}
      {dialog?.kind === 'rename-view' && (
        <RenameDialog title="Rename view" label="View name" initial={dialog.view.name} onClose={() => setDialog(null)} onSubmit={(name) => model.updateView(dialog.view.id, { name })} />
      )}
      {dialog?.kind === 'rename' && (
        <RenameDialog title="Rename column" label="Column name" initial={dialog.column.label} onClose={() => setDialog(null)} onSubmit={(label) => model.updateColumn(surface.id, dialog.column.id, { label })} />
      )}
      {dialog?.kind === 'formula' && <FormulaDialog model={model} surfaceId={surface.id} surfaces={props.surfaces} column={dialog.column} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'options' && (
        <OptionsDialog column={dialog.column} onClose={() => setDialog(null)} onSave={(options) => model.updateColumn(surface.id, dialog.column.id, { options })} />
      )}
      {dialog?.kind === 'add-column' && (
        <AddColumnDialog
          model={model}
          surfaceId={surface.id}
          surfaces={props.surfaces}
          onClose={() => setDialog(null)}
          onAdd={(label, type, pointers) => model.addColumn(surface.id, { label, type, ...pointers })}
        />
      )}
    </div>,
  );
}

/**
 * The view on show: the one picked; when that one was deleted, the first
 * view; for someone who never picked, the view they landed on; none (the
 * plain grid) when the sheet has no views.
 */
function currentView(views: ViewDef[], picked: string | null, landed: string): ViewDef | null {
  const wanted = picked ?? landed;
  if (wanted === PLAIN_GRID) return null;
  return views.find((view) => view.id === wanted) ?? views[0] ?? null;
}

/** The sheet's columns in a view's order: those it names first, the others (added since) after, in the sheet's order. */
function orderedColumns(columns: ColumnDef[], order: string[]): ColumnDef[] {
  const byKey = new Map(columns.map((column) => [column.key, column]));
  const named = order.flatMap((key) => byKey.get(key) ?? []);
  return [...named, ...columns.filter((column) => !order.includes(column.key))];
}

/** Values a row needs to match a filter's plain "is" conditions (all joined by and), so a row added in the view shows in it. */
function valuesOf(filter: RowFilter | null, columns: ColumnDef[]): RowData {
  const values: RowData = {};
  if (!filter?.and || filter.or?.length) return values;
  for (const item of filter.and) {
    if (!('column' in item) || item.op !== 'eq' || item.value === undefined || item.value === null || Array.isArray(item.value)) continue;
    const column = columns.find((c) => c.key === item.column);
    if (!column || column.type === 'person') continue;
    values[item.column] = column.type === 'number' ? Number(item.value) : column.type === 'checkbox' ? item.value === true || item.value === 'true' : column.type === 'select' ? [String(item.value)] : String(item.value);
  }
  return values;
}

function uniqueName(base: string, views: ViewDef[]): string {
  const taken = new Set(views.map((view) => view.name));
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base} ${n}`)) n++;
  return `${base} ${n}`;
}

function needsOptions(type: ColumnType) {
  return type === 'status' || type === 'select';
}

function AddColumnDialog(props: {
  model: TableModel;
  surfaceId: string;
  surfaces: SurfaceViewProps['surfaces'];
  onClose: () => void;
  onAdd: (label: string, type: ColumnType, pointers: ColumnPointers) => void;
}) {
  const [label, setLabel] = useState('');
  const [type, setType] = useState<ColumnType>('text');
  const [pointers, setPointers] = useState<ColumnPointers | null>({});
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!label.trim() || !pointers) return;
    try {
      props.onAdd(label.trim(), type, pointers);
      props.onClose();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <Dialog
      title="Add a column"
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form="add-column" disabled={!label.trim() || !pointers}>
            Add column
          </Button>
        </>
      }
    >
      <form id="add-column" class="form" onSubmit={submit}>
        <label class="field">
          <span>Name</span>
          <input ref={input} name="label" maxLength={200} placeholder="Due date" value={label} onInput={(e) => setLabel((e.target as HTMLInputElement).value)} />
        </label>
        <fieldset class="field">
          <legend>Type</legend>
          <div class="type-grid">
            {COLUMN_TYPES.map((option) => (
              <label key={option} class={`type-choice ${type === option ? 'is-selected' : ''}`}>
                <input
                  type="radio"
                  name="type"
                  value={option}
                  checked={type === option}
                  onChange={() => {
                    setType(option);
                    setPointers(LINKING_TYPES.has(option) ? null : {});
                  }}
                />
                <Icon name={TYPE_LABELS[option]?.icon ?? 'text'} />
                <span>{TYPE_LABELS[option]?.label ?? option}</span>
              </label>
            ))}
          </div>
        </fieldset>
        {type === 'formula' ? (
          <FormulaField model={props.model} surfaceId={props.surfaceId} surfaces={props.surfaces} initial="" onChange={(formula) => setPointers(formula === null ? null : { formula })} />
        ) : (
          LINKING_TYPES.has(type) && <AddLinkFields key={type} type={type as 'link' | 'lookup' | 'rollup'} model={props.model} surfaceId={props.surfaceId} surfaces={props.surfaces} onChange={setPointers} />
        )}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}

/** The formula editor over a sheet: `onChange` gets the formula while it is valid, null while it is not. */
function FormulaField(props: { model: TableModel; surfaceId: string; surfaces: SurfaceViewProps['surfaces']; initial: string; columnKey?: string; onChange: (formula: string | null) => void }) {
  const [formula, setFormula] = useState(props.initial);
  const columns = props.model.columns(props.surfaceId);
  const check = useCallback((text: string) => props.model.tryFormula(props.surfaceId, text, sheetDirectory(props.surfaces), props.columnKey), [props.model, props.surfaceId, props.surfaces, props.columnKey]);
  return (
    <div class="field">
      <span>Formula</span>
      <FormulaEditor
        value={formula}
        columns={columns.filter((column) => column.key !== props.columnKey)}
        check={check}
        onInput={(text, result) => {
          setFormula(text);
          props.onChange(result.ok ? text : null);
        }}
      />
    </div>
  );
}

/** Changes a formula column's formula, checked as it is typed. */
function FormulaDialog(props: { model: TableModel; surfaceId: string; surfaces: SurfaceViewProps['surfaces']; column: ColumnDef; onClose: () => void }) {
  const [formula, setFormula] = useState<string | null>(typeof props.column.formula === 'string' ? props.column.formula : null);
  return (
    <FormDialog
      title={`Formula of “${props.column.label}”`}
      id="edit-formula"
      submitLabel="Save formula"
      wide
      disabled={formula === null}
      onClose={props.onClose}
      onSubmit={async () => {
        props.model.updateColumn(props.surfaceId, props.column.id, { formula: formula! });
        props.onClose();
      }}
    >
      <FormulaField model={props.model} surfaceId={props.surfaceId} surfaces={props.surfaces} initial={formula ?? ''} columnKey={props.column.key} onChange={setFormula} />
    </FormDialog>
  );
}
