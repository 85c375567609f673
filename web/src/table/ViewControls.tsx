import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../ui/icons';
import { Button, IconButton } from '../ui/primitives';
import { TYPE_LABELS, type PeopleDirectory } from './cells';
import {
  isAnswerable,
  OPS_BY_TYPE,
  type ColumnDef,
  type ColumnType,
  type FilterCondition,
  type FilterGroupInner,
  type FilterOp,
  type FilterValue,
  type RowFilter,
  type RowHeight,
  type SortKey,
  type ViewDef,
  type ViewPatch,
} from './table-model';

/** How an operator reads for a column type; `empty` is offered as two choices, "is empty" and "is not empty". */
function opLabel(type: ColumnType, op: FilterOp): string {
  if (type === 'date') {
    const dates: Partial<Record<FilterOp, string>> = { eq: 'is on', neq: 'is not on', lt: 'is before', lte: 'is on or before', gt: 'is after', gte: 'is on or after', between: 'is between' };
    if (dates[op]) return dates[op]!;
  }
  if (type === 'number') {
    const numbers: Partial<Record<FilterOp, string>> = { eq: '=', neq: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥', between: 'is between' };
    if (numbers[op]) return numbers[op]!;
  }
  if (type === 'select' && op === 'contains') return 'has';
  const labels: Record<FilterOp, string> = { eq: 'is', neq: 'is not', contains: 'contains', starts: 'starts with', in: 'is any of', lt: '<', lte: '≤', gt: '>', gte: '≥', between: 'is between', empty: 'is empty' };
  return labels[op];
}

/** The operator choices of a column type, as the `<select>` of a condition lists them. */
function opChoices(type: ColumnType): Array<{ key: string; label: string }> {
  return OPS_BY_TYPE[type].flatMap((op) =>
    op === 'empty'
      ? [
          { key: 'empty:true', label: 'is empty' },
          { key: 'empty:false', label: 'is not empty' },
        ]
      : [{ key: op, label: opLabel(type, op) }],
  );
}

function choiceOf(condition: { op: FilterOp; value?: FilterValue }): string {
  return condition.op === 'empty' ? `empty:${condition.value === false || condition.value === 'false' ? 'false' : 'true'}` : condition.op;
}

/** A value a fresh condition starts with: only where there is an obvious one (a checkbox is "checked"). */
function initialValue(column: ColumnDef, op: FilterOp): FilterValue | undefined {
  if (op === 'empty') return true;
  if (column.type === 'checkbox') return true;
  if (op === 'in' || op === 'between') return [];
  return undefined;
}

/** Whether a condition says something yet: a value is chosen (both ends for `between`) and the columns can answer it. */
function isComplete(columns: ColumnDef[], condition: FilterCondition): boolean {
  const { op, value } = condition;
  if (op !== 'empty' && (value === undefined || value === null || value === '')) return false;
  if (Array.isArray(value) && (value.length === 0 || (op === 'between' && (value.length !== 2 || value.some((part) => part === ''))))) return false;
  return isAnswerable(columns, condition);
}

type Entry = { id: number; condition: FilterCondition } | { id: number; group: FilterGroupInner };
let nextEntry = 1;

/** A new condition on a column: its type's first operator, with a value only where there is an obvious one. */
function freshEntry(column: ColumnDef): Entry {
  const op = OPS_BY_TYPE[column.type][0]!;
  return { id: nextEntry++, condition: { column: column.key, op, value: initialValue(column, op) } };
}

/** The builder shows one level: conditions joined by and or or. A nested group (made over REST) is kept as it is, shown as one entry. */
function entriesOf(filter: RowFilter | null): { join: 'and' | 'or'; entries: Entry[]; mixed: boolean } {
  if (!filter) return { join: 'and', entries: [], mixed: false };
  const join = filter.and === undefined && filter.or !== undefined ? 'or' : 'and';
  const items = filter[join] ?? [];
  return {
    join,
    mixed: Boolean(filter.and?.length && filter.or?.length),
    entries: items.map((item) => ('column' in item ? { id: nextEntry++, condition: { ...item } } : { id: nextEntry++, group: item })),
  };
}

function filterOf(columns: ColumnDef[], join: 'and' | 'or', entries: Entry[]): RowFilter | null {
  const items = entries.flatMap((entry): Array<FilterCondition | FilterGroupInner> => ('group' in entry ? [entry.group] : isComplete(columns, entry.condition) ? [entry.condition] : []));
  return items.length ? { [join]: items } : null;
}

export function countConditions(filter: RowFilter | null): number {
  return (filter?.and?.length ?? 0) + (filter?.or?.length ?? 0);
}

/**
 * The filter on show. Complete conditions are kept as they are made (they
 * become this person's unsaved filter, docs/TABLES.md "In the web app"); one
 * still being filled in stays in this panel until it says something.
 * `startWith` adds a condition on that column when the panel opens (a
 * column menu's "Filter by this column").
 */
export function FilterPanel(props: { filter: RowFilter | null; columns: ColumnDef[]; people: PeopleDirectory; startWith?: string; onSave: (filter: RowFilter | null) => void }) {
  const { columns } = props;
  const stored = JSON.stringify(props.filter);
  const [state, setState] = useState(() => {
    const shown = entriesOf(props.filter);
    const column = columns.find((c) => c.key === props.startWith);
    return column ? { ...shown, entries: [...shown.entries, freshEntry(column)] } : shown;
  });
  const saved = useRef(stored);
  // The filter on show now: `saved` (the one this panel last showed or kept) lags behind it after an outside change waited for the typing.
  const shown = useRef({ json: stored, filter: props.filter });
  shown.current = { json: stored, filter: props.filter };
  const timer = useRef(0);
  const pending = useRef<RowFilter | null | undefined>(undefined);
  const panel = useRef<HTMLDivElement>(null);
  // A pending change is flushed when the panel closes too: through the newest onSave, not the one of the first render.
  const onSave = useRef(props.onSave);
  onSave.current = props.onSave;

  // The filter changed elsewhere (a reset, a colleague's saved view): show it, once no value is being typed here.
  // Put back while someone types (or sits in a value box about to), it would replace what is typed, and its
  // conditions, drawn anew, take the focus away; the typing wins instead: kept, it becomes their own unsaved filter.
  const showChangeFromElsewhere = () => {
    const typing = pending.current !== undefined || (isTextBox(document.activeElement) && panel.current?.contains(document.activeElement));
    if (shown.current.json === saved.current || typing) return;
    saved.current = shown.current.json;
    setState(entriesOf(shown.current.filter));
  };
  useEffect(showChangeFromElsewhere, [stored]);

  const flush = () => {
    window.clearTimeout(timer.current);
    if (pending.current === undefined) return;
    const filter = pending.current;
    pending.current = undefined;
    const json = JSON.stringify(filter);
    saved.current = json;
    if (json !== shown.current.json) onSave.current(filter);
  };
  useEffect(() => flush, []);

  const change = (join: 'and' | 'or', entries: Entry[], typing = false) => {
    setState({ join, entries, mixed: false });
    pending.current = filterOf(columns, join, entries);
    window.clearTimeout(timer.current);
    if (typing) timer.current = window.setTimeout(flush, 300);
    else flush();
  };

  const setCondition = (id: number, condition: FilterCondition, typing = false) =>
    change(
      state.join,
      state.entries.map((entry) => (entry.id === id ? { id, condition } : entry)),
      typing,
    );

  const add = () => {
    const column = columns[0];
    if (column) change(state.join, [...state.entries, freshEntry(column)]);
  };

  return (
    // Leaving a value box shows a change that waited for the typing (the focus has moved on by the next task).
    <div class="view-panel" ref={panel} onFocusOut={() => window.setTimeout(() => panel.current && showChangeFromElsewhere())}>
      <header class="view-panel-header">
        <strong>Filter</strong>
      </header>
      {state.mixed && <p class="muted">This view's filter was set through the API with both “and” and “or”; changing it here keeps only the “and” part.</p>}
      {state.entries.length === 0 && <p class="muted view-panel-empty">No conditions: every row is shown.</p>}
      <ul class="filter-list">
        {state.entries.map((entry, index) => (
          <li key={entry.id} class="filter-row">
            <span class="filter-join">
              {index === 0 ? (
                'Where'
              ) : index === 1 ? (
                <select aria-label="Join conditions with" value={state.join} onChange={(event) => change((event.target as HTMLSelectElement).value as 'and' | 'or', state.entries)}>
                  <option value="and">and</option>
                  <option value="or">or</option>
                </select>
              ) : (
                state.join
              )}
            </span>
            {'group' in entry ? (
              <span class="filter-group">
                A group of {('and' in entry.group ? entry.group.and : entry.group.or).length} conditions joined by {'and' in entry.group ? 'and' : 'or'}
              </span>
            ) : (
              <ConditionEditor
                columns={columns}
                people={props.people}
                condition={entry.condition}
                complete={isComplete(columns, entry.condition)}
                onChange={(condition, typing) => setCondition(entry.id, condition, typing)}
              />
            )}
            <IconButton icon="x" label="Remove condition" onClick={() => change(state.join, state.entries.filter((other) => other.id !== entry.id))} />
          </li>
        ))}
      </ul>
      <Button variant="ghost" icon="plus" onClick={add} disabled={columns.length === 0}>
        Add condition
      </Button>
    </div>
  );
}

function ConditionEditor(props: {
  columns: ColumnDef[];
  people: PeopleDirectory;
  condition: FilterCondition;
  complete: boolean;
  onChange: (condition: FilterCondition, typing?: boolean) => void;
}) {
  const { condition } = props;
  const column = props.columns.find((c) => c.key === condition.column);
  const pickColumn = (key: string) => {
    const next = props.columns.find((c) => c.key === key)!;
    const op = OPS_BY_TYPE[next.type].includes(condition.op) && condition.op !== 'in' && condition.op !== 'between' ? condition.op : OPS_BY_TYPE[next.type][0]!;
    props.onChange({ column: key, op, value: initialValue(next, op) });
  };
  const pickOp = (choice: string) => {
    if (choice.startsWith('empty:')) return props.onChange({ column: condition.column, op: 'empty', value: choice === 'empty:true' });
    const op = choice as FilterOp;
    const keeps = op !== 'in' && op !== 'between' && condition.op !== 'in' && condition.op !== 'between' && condition.op !== 'empty';
    props.onChange({ column: condition.column, op, value: keeps ? condition.value : column ? initialValue(column, op) : undefined });
  };
  return (
    <span class={`filter-condition ${props.complete ? '' : 'is-incomplete'}`}>
      <select aria-label="Column" value={condition.column} onChange={(event) => pickColumn((event.target as HTMLSelectElement).value)}>
        {!column && <option value={condition.column}>{condition.column} (gone)</option>}
        {props.columns.map((c) => (
          <option key={c.key} value={c.key}>
            {c.label}
          </option>
        ))}
      </select>
      {column && (
        <select aria-label="Operator" value={choiceOf(condition)} onChange={(event) => pickOp((event.target as HTMLSelectElement).value)}>
          {opChoices(column.type).map((choice) => (
            <option key={choice.key} value={choice.key}>
              {choice.label}
            </option>
          ))}
        </select>
      )}
      {column && condition.op !== 'empty' && (
        <ValueInput column={column} op={condition.op} value={condition.value} people={props.people} onChange={(value, typing) => props.onChange({ ...condition, value }, typing)} />
      )}
    </span>
  );
}

function isTextBox(element: Element | null): boolean {
  return element instanceof HTMLInputElement && ['text', 'number', 'date', 'search'].includes(element.type);
}

/** The value of a condition, in an input suited to the column's type and the operator. */
function ValueInput(props: { column: ColumnDef; op: FilterOp; value: FilterValue | undefined; people: PeopleDirectory; onChange: (value: FilterValue | undefined, typing?: boolean) => void }) {
  const { column, op, value } = props;
  const choices: Array<{ value: string; label: string }> =
    column.type === 'status' || column.type === 'select'
      ? (column.options ?? []).map((option) => ({ value: option.value, label: option.label }))
      : column.type === 'person'
        ? [...props.people.values()].map((person) => ({ value: person.id, label: person.name }))
        : [];

  if (column.type === 'checkbox') {
    return (
      <select aria-label="Value" value={String(value !== false && value !== 'false')} onChange={(event) => props.onChange((event.target as HTMLSelectElement).value === 'true')}>
        <option value="true">checked</option>
        <option value="false">not checked</option>
      </select>
    );
  }
  if (choices.length > 0 || column.type === 'status' || column.type === 'select' || column.type === 'person') {
    if (op === 'in') {
      const picked = new Set(Array.isArray(value) ? value.map(String) : []);
      return (
        <span class="filter-choices" role="group" aria-label="Values">
          {choices.map((choice) => (
            <label key={choice.value} class="filter-choice">
              <input
                type="checkbox"
                checked={picked.has(choice.value)}
                onChange={(event) => props.onChange(choices.map((c) => c.value).filter((v) => (v === choice.value ? (event.target as HTMLInputElement).checked : picked.has(v))))}
              />
              <span>{choice.label}</span>
            </label>
          ))}
        </span>
      );
    }
    return (
      <select aria-label="Value" value={typeof value === 'string' ? value : ''} onChange={(event) => props.onChange((event.target as HTMLSelectElement).value || undefined)}>
        <option value="">Choose…</option>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    );
  }

  const inputType = column.type === 'number' ? 'number' : column.type === 'date' ? 'date' : 'text';
  const parse = (text: string): string | number | undefined => (text === '' ? undefined : column.type === 'number' ? (Number.isFinite(Number(text)) ? Number(text) : undefined) : text);
  if (op === 'between') {
    const [from, to] = Array.isArray(value) ? value : [];
    const set = (index: 0 | 1, text: string) => {
      const parts: Array<string | number> = [from ?? '', to ?? ''];
      parts[index] = parse(text) ?? '';
      props.onChange(parts, true);
    };
    return (
      <span class="filter-between">
        <input type={inputType} aria-label="From" value={from ?? ''} onInput={(event) => set(0, (event.target as HTMLInputElement).value)} />
        <span class="muted">and</span>
        <input type={inputType} aria-label="To" value={to ?? ''} onInput={(event) => set(1, (event.target as HTMLInputElement).value)} />
      </span>
    );
  }
  if (op === 'in') {
    const text = Array.isArray(value) ? value.join(', ') : '';
    return (
      <input
        type="text"
        aria-label="Values"
        placeholder="a, b, c"
        defaultValue={text}
        onInput={(event) => {
          const parts = (event.target as HTMLInputElement).value
            .split(',')
            .map((part) => part.trim())
            .filter(Boolean)
            .map((part) => parse(part))
            .filter((part): part is string | number => part !== undefined);
          props.onChange(parts, true);
        }}
      />
    );
  }
  return (
    <input
      type={inputType}
      aria-label="Value"
      placeholder={inputType === 'text' ? 'Value' : undefined}
      value={value === undefined || value === null || Array.isArray(value) ? '' : String(value)}
      onInput={(event) => props.onChange(parse((event.target as HTMLInputElement).value), true)}
    />
  );
}

/** The sort keys on show, first key first; each change is kept at once (as this person's unsaved sort). */
export function SortPanel(props: { sort: SortKey[]; columns: ColumnDef[]; onSave: (sort: SortKey[]) => void }) {
  const { columns, sort } = props;
  const unused = columns.filter((column) => !sort.some((key) => key.column === column.key));
  const set = (index: number, key: SortKey) => props.onSave(sort.map((other, i) => (i === index ? key : other)));
  return (
    <div class="view-panel">
      <header class="view-panel-header">
        <strong>Sort</strong>
      </header>
      {sort.length === 0 && <p class="muted view-panel-empty">In the table's own order.</p>}
      <ul class="filter-list">
        {sort.map((key, index) => (
          <li key={key.column} class="filter-row">
            <span class="filter-join">{index === 0 ? 'Sort by' : 'then by'}</span>
            <span class="filter-condition">
              <select aria-label="Sort column" value={key.column} onChange={(event) => set(index, { ...key, column: (event.target as HTMLSelectElement).value })}>
                {columns
                  .filter((column) => column.key === key.column || !sort.some((other) => other.column === column.key))
                  .map((column) => (
                    <option key={column.key} value={column.key}>
                      {column.label}
                    </option>
                  ))}
              </select>
              <select aria-label="Direction" value={key.direction} onChange={(event) => set(index, { ...key, direction: (event.target as HTMLSelectElement).value as 'asc' | 'desc' })}>
                <option value="asc">ascending</option>
                <option value="desc">descending</option>
              </select>
            </span>
            <IconButton icon="x" label="Remove sort" onClick={() => props.onSave(sort.filter((_, i) => i !== index))} />
          </li>
        ))}
      </ul>
      {unused.length > 0 && (
        <Button variant="ghost" icon="plus" onClick={() => props.onSave([...sort, { column: unused[0]!.key, direction: 'asc' }])}>
          Add sort
        </Button>
      )}
    </div>
  );
}

const HEIGHTS: Array<{ value: RowHeight; label: string }> = [
  { value: 'short', label: 'Short' },
  { value: 'medium', label: 'Medium' },
  { value: 'tall', label: 'Tall' },
  { value: 'extra', label: 'Extra tall' },
];

/** Which columns the view shows and in what order, and (for a grid) its row height. */
export function FieldsPanel(props: { view: ViewDef; ordered: ColumnDef[]; editable: boolean; onSave: (patch: ViewPatch) => void }) {
  const { view, ordered, editable } = props;
  const hidden = new Set(view.hiddenColumns);
  const move = (index: number, by: number) => {
    const keys = ordered.map((column) => column.key);
    const [key] = keys.splice(index, 1);
    keys.splice(index + by, 0, key!);
    props.onSave({ columnOrder: keys });
  };
  return (
    <div class="view-panel">
      <header class="view-panel-header">
        <strong>{view.kind === 'board' ? 'Card fields' : 'Fields'}</strong>
        {!editable && <span class="muted">Only editors change a view.</span>}
      </header>
      <ul class="field-list">
        {ordered.map((column, index) => (
          <li key={column.key} class="field-item">
            <label class="field-toggle">
              <input
                type="checkbox"
                checked={!hidden.has(column.key)}
                disabled={!editable}
                onChange={(event) => props.onSave({ hiddenColumns: (event.target as HTMLInputElement).checked ? view.hiddenColumns.filter((key) => key !== column.key) : [...view.hiddenColumns, column.key] })}
              />
              <Icon name={TYPE_LABELS[column.type]?.icon ?? 'text'} size={14} />
              <span>{column.label}</span>
            </label>
            {editable && (
              <span class="field-moves">
                <IconButton icon="chevronUp" label={`Move ${column.label} up`} disabled={index === 0} onClick={() => move(index, -1)} />
                <IconButton icon="chevronDown" label={`Move ${column.label} down`} disabled={index === ordered.length - 1} onClick={() => move(index, 1)} />
              </span>
            )}
          </li>
        ))}
      </ul>
      {view.kind === 'grid' && (
        <div class="row-heights" role="radiogroup" aria-label="Row height">
          <span class="muted">Row height</span>
          <span class="segmented">
            {HEIGHTS.map((height) => (
              <button key={height.value} role="radio" aria-checked={view.rowHeight === height.value} class={view.rowHeight === height.value ? 'is-selected' : ''} disabled={!editable} onClick={() => props.onSave({ rowHeight: height.value })}>
                {height.label}
              </button>
            ))}
          </span>
        </div>
      )}
    </div>
  );
}
