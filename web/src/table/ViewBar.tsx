import { useState } from 'preact/hooks';
import { FormDialog } from '../ui/FormDialog';
import { Icon } from '../ui/icons';
import { FORM_COLUMN_TYPES } from '../../../src/model/table/views';
import type { ColumnDef, ViewDef, ViewFields, ViewKind } from './table-model';

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
                <Icon name={KIND_CHOICES.find((choice) => choice.value === view.kind)?.icon ?? 'table'} size={14} />
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

/** What a new view is made with: its name and kind, and the columns its kind needs. */
export type NewViewFields = Pick<ViewFields, 'name' | 'kind' | 'groupBy'> & Partial<Pick<ViewFields, 'dateColumn' | 'endDateColumn' | 'coverColumn' | 'cardFields' | 'form'>>;

const KIND_CHOICES = [
  { value: 'grid', label: 'Grid', icon: 'table', hint: 'Rows and columns' },
  { value: 'board', label: 'Board', icon: 'board', hint: 'Cards in lanes by status' },
  { value: 'calendar', label: 'Calendar', icon: 'calendar', hint: 'Rows on their dates' },
  { value: 'timeline', label: 'Timeline', icon: 'activity', hint: 'Bars from start to end' },
  { value: 'gallery', label: 'Gallery', icon: 'image', hint: 'Cards with a cover image' },
  { value: 'form', label: 'Form', icon: 'longtext', hint: 'A public page that adds rows' },
] as const;

/**
 * A new view: its name and kind, and what its kind needs: a board the status
 * column whose options are its lanes, a calendar or timeline its date
 * columns, a gallery its cover column. A form starts closed, asking the
 * first column. Also "Save as view", which starts from the view on show.
 */
export function NewViewDialog(props: {
  title?: string;
  submitLabel?: string;
  initialKind?: ViewKind;
  initialGroupBy?: string | null;
  columns: ColumnDef[];
  suggestedName: (kind: ViewKind) => string;
  onClose: () => void;
  onCreate: (fields: NewViewFields) => void;
}) {
  const groupable = props.columns.filter((column) => column.type === 'status');
  const dated = props.columns.filter((column) => column.type === 'date');
  const covers = props.columns.filter((column) => column.type === 'attachment' || column.type === 'url');
  const [kind, setKind] = useState<ViewKind>(props.initialKind ?? 'grid');
  const [name, setName] = useState<string | null>(null);
  const [groupBy, setGroupBy] = useState(props.initialGroupBy ?? groupable[0]?.key ?? '');
  const [dateColumn, setDateColumn] = useState(dated[0]?.key ?? '');
  const [endDateColumn, setEndDateColumn] = useState('');
  const [coverColumn, setCoverColumn] = useState(covers[0]?.key ?? '');
  const shownName = name ?? props.suggestedName(kind);
  const needsDate = kind === 'calendar' || kind === 'timeline';
  const blocked = !shownName.trim() || (kind === 'board' && !groupBy) || (needsDate && !dateColumn);
  const submit = async () => {
    if (blocked) return;
    const first = props.columns.find((column) => FORM_COLUMN_TYPES.has(column.type));
    props.onCreate({
      name: shownName.trim(),
      kind,
      groupBy: kind === 'board' ? groupBy : null,
      ...(needsDate ? { dateColumn, endDateColumn: endDateColumn || null } : {}),
      ...(kind === 'gallery' ? { coverColumn: coverColumn || null } : {}),
      ...(kind === 'form' ? { form: { title: shownName.trim(), description: '', fields: first ? [{ column: first.key, required: true }] : [], open: false } } : {}),
    });
    props.onClose();
  };
  const columnSelect = (label: string, fieldName: string, value: string, set: (value: string) => void, choices: ColumnDef[], none?: string, hint?: string) => (
    <label class="field">
      <span>{label}</span>
      <select name={fieldName} value={value} onChange={(event) => set((event.target as HTMLSelectElement).value)}>
        {none !== undefined && <option value="">{none}</option>}
        {choices.map((column) => (
          <option key={column.key} value={column.key}>
            {column.label}
          </option>
        ))}
      </select>
      {hint && <small>{hint}</small>}
    </label>
  );
  return (
    <FormDialog title={props.title ?? 'New view'} id="new-view" submitLabel={props.submitLabel ?? 'Create view'} disabled={blocked} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Name</span>
        <input name="name" maxLength={200} value={shownName} onInput={(event) => setName((event.target as HTMLInputElement).value)} onFocus={(event) => (event.target as HTMLInputElement).select()} />
      </label>
      <fieldset class="field">
        <legend>Kind</legend>
        <div class="choice-row">
          {KIND_CHOICES.map((choice) => (
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
          columnSelect('Lanes from', 'groupBy', groupBy, setGroupBy, groupable, undefined, 'Each option of this status column is a lane; dragging a card to another lane changes the cell.')
        ) : (
          <p class="form-error" role="alert">
            A board groups rows by a status column, and this table has none yet. Add one first.
          </p>
        ))}
      {needsDate &&
        (dated.length > 0 ? (
          <>
            {columnSelect('Starts on', 'dateColumn', dateColumn, setDateColumn, dated)}
            {columnSelect('Ends on', 'endDateColumn', endDateColumn, setEndDateColumn, dated.filter((column) => column.key !== dateColumn), 'The same day')}
          </>
        ) : (
          <p class="form-error" role="alert">
            A {kind} places rows by a date column, and this table has none yet. Add one first.
          </p>
        ))}
      {kind === 'gallery' && columnSelect('Cover from', 'coverColumn', coverColumn, setCoverColumn, covers, 'No cover')}
    </FormDialog>
  );
}
