import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { messageOf } from '../lib/api';
import { NEVER_TRUE, useStore } from '../lib/store';
import { useLocation } from '../lib/router';
import { usePeers } from '../sync/use-document';
import { Icon } from '../ui/icons';
import { Button, Dialog, IconButton, Menu, Spinner, type MenuItem } from '../ui/primitives';
import { showError } from '../ui/toast';
import { RenameDialog } from '../ui/RenameDialog';
import type { SurfaceViewProps } from '../workspace-context/context';
import { TYPE_LABELS, type PeopleDirectory } from './cells';
import { Grid, type CellAddress, type PeerCell } from './Grid';
import { OptionsDialog } from './OptionsDialog';
import { COLUMN_TYPES, TableModel, type ColumnDef, type ColumnType } from './table-model';
import { confirmDialog } from '../ui/dialogs';
import { CsvTools } from './CsvImport';

type OpenMenu = { kind: 'header'; column: ColumnDef; anchor: HTMLElement } | { kind: 'row'; rowId: string; anchor: HTMLElement } | { kind: 'hidden'; anchor: HTMLElement };
type OpenDialog = { kind: 'rename'; column: ColumnDef } | { kind: 'options'; column: ColumnDef } | { kind: 'add-column' } | null;

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

  const people: PeopleDirectory = useMemo(() => {
    const directory: PeopleDirectory = new Map();
    for (const member of context.members) {
      directory.set(member.principal.id, { id: member.principal.id, name: member.principal.name, avatarUrl: member.principal.avatarUrl, kind: member.principalType });
      for (const agent of member.inheritedAgents ?? []) directory.set(agent.id, { id: agent.id, name: agent.name, avatarUrl: agent.avatarUrl, kind: 'agent' });
    }
    return directory;
  }, [context.members]);

  if (!model || !document || (!ready && !synced)) return <Spinner label="Opening the table…" />;

  const allColumns = model.columns(surface.id);
  const columns = allColumns.filter((column) => !column.hidden);
  const hidden = allColumns.filter((column) => column.hidden);
  const rowIds = model.rowIds(surface.id);
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

  const addRow = (afterRowId?: string) =>
    run(() => {
      const position = afterRowId ? rowIds.indexOf(afterRowId) + 1 : undefined;
      const id = model.addRow(surface.id, {}, position);
      const first = columns[0];
      if (first) setActive({ rowId: id, key: first.key });
      requestAnimationFrame(() => {
        const scroller = window.document.querySelector<HTMLElement>('.grid-scroll');
        if (scroller && position === undefined) scroller.scrollTop = scroller.scrollHeight;
        scroller?.focus({ preventScroll: true });
      });
    });

  const headerItems = (column: ColumnDef): MenuItem[] => {
    const index = allColumns.findIndex((c) => c.id === column.id);
    return [
      { label: 'Rename…', icon: 'edit', onSelect: () => setDialog({ kind: 'rename', column }) },
      {
        label: 'Type',
        icon: TYPE_LABELS[column.type]?.icon ?? 'text',
        hint: TYPE_LABELS[column.type]?.label,
        submenu: COLUMN_TYPES.map((type) => ({
          label: TYPE_LABELS[type]?.label ?? type,
          checked: column.type === type,
          onSelect: () => run(() => model.updateColumn(surface.id, column.id, { type, ...(needsOptions(type) && !column.options ? { options: [] } : {}) })),
        })),
      },
      ...(needsOptions(column.type) ? [{ label: 'Edit options…', icon: 'select', onSelect: () => setDialog({ kind: 'options', column }) }] : []),
      { separator: true, label: '' },
      { label: 'Move left', icon: 'arrowLeft', disabled: index <= 0, onSelect: () => run(() => model.moveColumn(surface.id, column.id, index - 1)) },
      { label: 'Move right', icon: 'arrowRight', disabled: index >= allColumns.length - 1, onSelect: () => run(() => model.moveColumn(surface.id, column.id, index + 1)) },
      { label: 'Hide', icon: 'eyeOff', onSelect: () => run(() => model.updateColumn(surface.id, column.id, { hidden: true })) },
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
    const index = rowIds.indexOf(rowId);
    if (!editable) return commentItems(rowId);
    return [
      ...commentItems(rowId),
      ...(context.abilities.comment ? [{ separator: true, label: '' }] : []),
      { label: 'Insert above', icon: 'plus', onSelect: () => run(() => model.addRow(surface.id, {}, Math.max(0, index))) },
      { label: 'Insert below', icon: 'plus', onSelect: () => addRow(rowId) },
      { label: 'Move up', icon: 'arrowLeft', disabled: index <= 0, onSelect: () => run(() => model.moveRowTo(rowId, index - 1)) },
      { label: 'Move down', icon: 'arrowRight', disabled: index >= rowIds.length - 1, onSelect: () => run(() => model.moveRowTo(rowId, index + 1)) },
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

  return (
    <div class="table-surface">
      <div class="table-toolbar">
        <span class="row-count" data-testid="row-count">
          {rowIds.length.toLocaleString()} {rowIds.length === 1 ? 'row' : 'rows'}
        </span>
        {hidden.length > 0 && (
          <Button variant="ghost" icon="eyeOff" onClick={(event) => setMenu({ kind: 'hidden', anchor: event.currentTarget as HTMLElement })}>
            {hidden.length} hidden
          </Button>
        )}
        <span class="toolbar-spacer" />
        <CsvTools workspaceId={context.workspace.id} surface={surface} columns={allColumns} editable={editable} />
        {!editable && <span class="badge badge-muted">Read only</span>}
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
      </div>
      <Grid
        model={model}
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
        onUndo={() => undo?.undo()}
        onRedo={() => undo?.redo()}
      />
      {rowIds.length === 0 && (
        <div class="grid-empty">
          <p>{editable ? 'No rows yet. Add one, or let an agent fill the table through the API.' : 'No rows yet.'}</p>
          {editable && (
            <Button variant="primary" icon="plus" onClick={() => addRow()}>
              New row
            </Button>
          )}
        </div>
      )}
      {menu?.kind === 'header' && <Menu anchor={menu.anchor} items={headerItems(menu.column)} onClose={() => setMenu(null)} />}
      {menu?.kind === 'row' && <Menu anchor={menu.anchor} items={rowItems(menu.rowId)} onClose={() => setMenu(null)} />}
      {menu?.kind === 'hidden' && (
        <Menu
          anchor={menu.anchor}
          onClose={() => setMenu(null)}
          items={hidden.map((column) => ({ label: `Show ${column.label}`, icon: 'eye', disabled: !editable, onSelect: () => run(() => model.updateColumn(surface.id, column.id, { hidden: false })) }))}
        />
      )}
      {dialog?.kind === 'rename' && (
        <RenameDialog title="Rename column" label="Column name" initial={dialog.column.label} onClose={() => setDialog(null)} onSubmit={(label) => model.updateColumn(surface.id, dialog.column.id, { label })} />
      )}
      {dialog?.kind === 'options' && (
        <OptionsDialog column={dialog.column} onClose={() => setDialog(null)} onSave={(options) => model.updateColumn(surface.id, dialog.column.id, { options })} />
      )}
      {dialog?.kind === 'add-column' && <AddColumnDialog onClose={() => setDialog(null)} onAdd={(label, type) => model.addColumn(surface.id, { label, type })} />}
    </div>
  );
}

function needsOptions(type: ColumnType) {
  return type === 'status' || type === 'select';
}

function AddColumnDialog(props: { onClose: () => void; onAdd: (label: string, type: ColumnType) => void }) {
  const [label, setLabel] = useState('');
  const [type, setType] = useState<ColumnType>('text');
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    if (!label.trim()) return;
    try {
      props.onAdd(label.trim(), type);
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
          <Button variant="primary" type="submit" form="add-column" disabled={!label.trim()}>
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
                <input type="radio" name="type" value={option} checked={type === option} onChange={() => setType(option)} />
                <Icon name={TYPE_LABELS[option]?.icon ?? 'text'} />
                <span>{TYPE_LABELS[option]?.label ?? option}</span>
              </label>
            ))}
          </div>
        </fieldset>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
