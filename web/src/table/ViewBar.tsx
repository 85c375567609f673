import { useState } from 'preact/hooks';
import { FormDialog } from '../ui/FormDialog';
import { Icon } from '../ui/icons';
import type { ColumnDef, ViewDef, ViewKind } from './table-model';

/** The key under which the plain grid (no view) is remembered as someone's choice. */
export const PLAIN_GRID = '';

/**
 * The sheet's views as tabs above the grid. Everyone switches between them;
 * editors add, rename and delete (through the menu of the view on show).
 */
export function ViewBar(props: {
  views: ViewDef[];
  currentId: string;
  /** Whether the one on show has this person's unsaved filter or sort: its tab is marked. */
  unsaved: boolean;
  editable: boolean;
  onPick: (viewId: string) => void;
  onNew: () => void;
  onViewMenu: (view: ViewDef, anchor: HTMLElement) => void;
}) {
  const { views, currentId } = props;
  if (views.length === 0 && !props.editable) return null;
  return (
    <div class="view-bar">
      <div class="view-tabs" role="tablist" aria-label="Views">
        {views.length > 0 && (
          <button role="tab" class={`view-tab ${currentId === PLAIN_GRID ? 'is-current' : ''}`} aria-selected={currentId === PLAIN_GRID} onClick={() => props.onPick(PLAIN_GRID)}>
            <Icon name="table" size={14} />
            <span>All rows</span>
            {currentId === PLAIN_GRID && props.unsaved && <UnsavedMark />}
          </button>
        )}
        {views.map((view) => {
          const current = view.id === currentId;
          return (
            <span key={view.id} class={`view-tab-wrap ${current ? 'is-current' : ''}`}>
              <button role="tab" class={`view-tab ${current ? 'is-current' : ''}`} aria-selected={current} data-view-id={view.id} onClick={() => props.onPick(view.id)}>
                <Icon name={view.kind === 'board' || view.kind === 'gallery' ? 'board' : 'table'} size={14} />
                <span>{view.name}</span>
                {current && props.unsaved && <UnsavedMark />}
              </button>
              {current && props.editable && (
                <button class="view-tab-menu" aria-label={`${view.name} options`} title="View options" onClick={(event) => props.onViewMenu(view, event.currentTarget as HTMLElement)}>
                  <Icon name="chevronDown" size={14} />
                </button>
              )}
            </span>
          );
        })}
      </div>
      {props.editable && (
        <button class="view-new" onClick={props.onNew}>
          <Icon name="plus" size={14} />
          <span>New view</span>
        </button>
      )}
    </div>
  );
}

function UnsavedMark() {
  // The toolbar says it in words (a status); here it is only a mark, so the tab keeps its name.
  return <span class="view-tab-unsaved" title="Your filter or sort is not saved" aria-hidden="true" />;
}

/**
 * A new view: its name and kind, and for a board the status column whose
 * options are its lanes. Also "Save as view", which starts from the view on show.
 */
export function NewViewDialog(props: {
  title?: string;
  submitLabel?: string;
  initialKind?: ViewKind;
  initialGroupBy?: string | null;
  columns: ColumnDef[];
  suggestedName: (kind: ViewKind) => string;
  onClose: () => void;
  onCreate: (fields: { name: string; kind: ViewKind; groupBy: string | null }) => void;
}) {
  const groupable = props.columns.filter((column) => column.type === 'status');
  const [kind, setKind] = useState<ViewKind>(props.initialKind ?? 'grid');
  const [name, setName] = useState<string | null>(null);
  const [groupBy, setGroupBy] = useState(props.initialGroupBy ?? groupable[0]?.key ?? '');
  const shownName = name ?? props.suggestedName(kind);
  const blocked = !shownName.trim() || (kind === 'board' && !groupBy);
  const submit = async () => {
    if (blocked) return;
    props.onCreate({ name: shownName.trim(), kind, groupBy: kind === 'board' ? groupBy : null });
    props.onClose();
  };
  return (
    <FormDialog title={props.title ?? 'New view'} id="new-view" submitLabel={props.submitLabel ?? 'Create view'} disabled={blocked} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Name</span>
        <input name="name" maxLength={200} value={shownName} onInput={(event) => setName((event.target as HTMLInputElement).value)} onFocus={(event) => (event.target as HTMLInputElement).select()} />
      </label>
      <fieldset class="field">
        <legend>Kind</legend>
        <div class="choice-row">
          {(
            [
              { value: 'grid', label: 'Grid', icon: 'table', hint: 'Rows and columns' },
              { value: 'board', label: 'Board', icon: 'board', hint: 'Cards in lanes by status' },
            ] as const
          ).map((choice) => (
            <label key={choice.value} class={`type-choice ${kind === choice.value ? 'is-selected' : ''}`}>
              <input type="radio" name="kind" value={choice.value} checked={kind === choice.value} onChange={() => setKind(choice.value)} />
              <Icon name={choice.icon} />
              <span>
                {choice.label}
                <small class="choice-hint">{choice.hint}</small>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      {kind === 'board' &&
        (groupable.length > 0 ? (
          <label class="field">
            <span>Lanes from</span>
            <select name="groupBy" value={groupBy} onChange={(event) => setGroupBy((event.target as HTMLSelectElement).value)}>
              {groupable.map((column) => (
                <option key={column.key} value={column.key}>
                  {column.label}
                </option>
              ))}
            </select>
            <small>Each option of this status column is a lane; dragging a card to another lane changes the cell.</small>
          </label>
        ) : (
          <p class="form-error" role="alert">
            A board groups rows by a status column, and this table has none yet. Add one first.
          </p>
        ))}
    </FormDialog>
  );
}
