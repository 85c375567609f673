import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Icon } from '../ui/icons';
import { Avatar } from '../ui/primitives';
import { optionColor, type PeopleDirectory } from './cells';
import { linkLabel, targetSheetOf, useLinks } from './links';
import { isAbsoluteWebUrl, isComputedColumn, isIsoDateOrDateTime, type CellValue, type ColumnDef, type ShownValue } from './table-model';

/** How an edit ended: where the active cell goes next. */
export type EditExit = 'down' | 'right' | 'left' | 'stay';

export interface EditorProps {
  column: ColumnDef;
  value: CellValue | undefined;
  /** A key typed on the grid that started the edit: it replaces the value. */
  initialText?: string;
  people: PeopleDirectory;
  commit: (value: CellValue, exit: EditExit) => void;
  cancel: () => void;
  /** Adds an option typed into a status or select cell to its column and answers its value; absent where the person cannot change columns. */
  createOption?: (label: string) => string | null;
}

export function CellEditor(outer: Omit<EditorProps, 'value'> & { value: ShownValue | undefined }) {
  if (isComputedColumn(outer.column)) return <ReadOnlyCell cancel={outer.cancel} />;
  // Only lookup cells hold a list of values; every other cell is as stored.
  const props = outer as EditorProps;
  switch (props.column.type) {
    case 'status':
    case 'select':
    case 'person':
    case 'link':
      return <ChoiceEditor {...props} />;
    case 'longtext':
      return <LongTextEditor {...props} />;
    default:
      return <TextEditor {...props} />;
  }
}

/** A lookup, formula or rollup is computed: editing it ends at once (change what it is computed from instead). */
function ReadOnlyCell(props: { cancel: () => void }) {
  useLayoutEffect(() => props.cancel(), []);
  return null;
}

/** How many of a large target sheet's rows the link picker lists at once (the search box narrows them). */
const LINK_CHOICES_SHOWN = 200;

function exitOf(event: KeyboardEvent): EditExit | null {
  if (event.key === 'Enter' && !event.shiftKey) return 'down';
  if (event.key === 'Tab') return event.shiftKey ? 'left' : 'right';
  return null;
}

/** Parses typed text into the column's value, or explains why it cannot. */
function parseTyped(column: ColumnDef, text: string): { value: CellValue } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  switch (column.type) {
    case 'number': {
      const number = Number(trimmed.replace(/,/g, ''));
      return Number.isFinite(number) ? { value: number } : { error: 'Type a number, like 42 or 3.5.' };
    }
    case 'date':
      return isIsoDateOrDateTime(trimmed) ? { value: trimmed } : { error: 'Pick a date.' };
    case 'url': {
      const candidate = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
      return isAbsoluteWebUrl(candidate) ? { value: candidate } : { error: 'Type a web address, like example.com.' };
    }
    default:
      return { value: text };
  }
}

function TextEditor(props: EditorProps) {
  const ref = useRef<HTMLInputElement>(null);
  const initial = props.initialText ?? (props.value === null || props.value === undefined ? '' : String(props.value));
  const [text, setText] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const done = useRef(false);

  useLayoutEffect(() => {
    const input = ref.current!;
    input.focus();
    if (props.initialText === undefined) input.select?.();
  }, []);

  const finish = (exit: EditExit) => {
    if (done.current) return true;
    const parsed = parseTyped(props.column, text);
    if ('error' in parsed) {
      setError(parsed.error);
      return false;
    }
    done.current = true;
    props.commit(parsed.value, exit);
    return true;
  };

  const type = props.column.type === 'date' ? 'date' : props.column.type === 'url' ? 'url' : 'text';
  return (
    <div class="cell-editor">
      <input
        ref={ref}
        type={type}
        inputMode={props.column.type === 'number' ? 'decimal' : undefined}
        value={props.column.type === 'date' ? text.slice(0, 10) : text}
        aria-label={`Edit ${props.column.label}`}
        aria-invalid={error ? 'true' : undefined}
        onInput={(event) => {
          setText((event.target as HTMLInputElement).value);
          setError(null);
        }}
        onKeyDown={(event) => {
          event.stopPropagation();
          const exit = exitOf(event);
          if (exit) {
            event.preventDefault();
            finish(exit);
          } else if (event.key === 'Escape') {
            event.preventDefault();
            done.current = true;
            props.cancel();
          }
        }}
        onBlur={() => {
          if (!finish('stay')) {
            done.current = true;
            props.cancel();
          }
        }}
      />
      {error && (
        <div class="cell-editor-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

function LongTextEditor(props: EditorProps) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const [text, setText] = useState(props.initialText ?? (typeof props.value === 'string' ? props.value : props.value == null ? '' : String(props.value)));
  const done = useRef(false);
  useLayoutEffect(() => {
    const area = ref.current!;
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
  }, []);
  const finish = (exit: EditExit) => {
    if (done.current) return;
    done.current = true;
    props.commit(text === '' ? null : text, exit);
  };
  return (
    <div class="cell-editor cell-editor-long">
      <textarea
        ref={ref}
        value={text}
        aria-label={`Edit ${props.column.label}`}
        onInput={(event) => setText((event.target as HTMLTextAreaElement).value)}
        onKeyDown={(event) => {
          event.stopPropagation();
          const exit = exitOf(event);
          if (exit) {
            event.preventDefault();
            finish(exit);
          } else if (event.key === 'Escape') {
            event.preventDefault();
            done.current = true;
            props.cancel();
          }
        }}
        onBlur={() => finish('stay')}
      />
      <div class="cell-editor-hint">Enter to save · Shift+Enter for a new line</div>
    </div>
  );
}

interface Choice {
  value: string;
  label: string;
  color?: string;
  person?: { id: string; name: string; avatarUrl: string | null; kind: 'user' | 'agent' };
}

/** Status (one option), select (several), person (one principal) and link (rows of the target sheet): a filterable list. */
function ChoiceEditor(props: EditorProps) {
  const links = useLinks();
  const isLink = props.column.type === 'link';
  const multiple = props.column.type === 'select' || isLink;
  const choices: Choice[] =
    props.column.type === 'person'
      ? [...props.people.values()].map((person) => ({ value: person.id, label: person.name, person }))
      : isLink
        ? linkChoices(props.column, links)
        : (props.column.options ?? []).map((option, i) => ({ value: option.value, label: option.label, color: optionColor(option, i) }));
  const current = props.value === null || props.value === undefined ? [] : Array.isArray(props.value) ? props.value : [String(props.value)];
  const [selected, setSelected] = useState<string[]>(current);
  const [filter, setFilter] = useState(props.initialText ?? '');
  const [active, setActive] = useState(0);
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  const needle = filter.trim().toLowerCase();
  const matching = choices.filter((choice) => !needle || choice.label.toLowerCase().includes(needle) || choice.value.toLowerCase().includes(needle));
  const shown = isLink ? matching.slice(0, LINK_CHOICES_SHOWN) : matching;
  // A typed value no option has yet is offered as a new one, after the matches.
  const typed = filter.trim();
  const creatable = props.createOption && (props.column.type === 'status' || props.column.type === 'select') && typed !== '' && !choices.some((choice) => choice.label.toLowerCase() === typed.toLowerCase());
  const itemCount = shown.length + (creatable ? 1 : 0);

  useLayoutEffect(() => ref.current?.focus(), []);
  useEffect(() => setActive(0), [filter]);

  const finish = (value: CellValue, exit: EditExit) => {
    if (done.current) return;
    done.current = true;
    props.commit(value, exit);
  };
  const pick = (choice: Choice | undefined, exit: EditExit = 'stay') => {
    if (!choice) return;
    if (!multiple) return finish(choice.value, exit);
    setSelected((list) => (list.includes(choice.value) ? list.filter((v) => v !== choice.value) : [...list, choice.value]));
  };
  const finishMultiple = (exit: EditExit) => finish(selected.length === 0 ? null : selected, exit);
  const create = (exit: EditExit = 'stay') => {
    const value = props.createOption?.(typed);
    if (!value) return;
    if (!multiple) return finish(value, exit);
    setSelected((list) => [...list, value]);
    setFilter('');
  };
  const choose = (index: number, exit: EditExit = 'stay') => (index === shown.length && creatable ? create(exit) : pick(shown[index], exit));

  return (
    <div class="cell-editor cell-editor-choice" role="dialog" aria-label={`Choose ${props.column.label}`}>
      <input
        ref={ref}
        value={filter}
        placeholder={props.column.type === 'person' ? 'Find a person or agent' : isLink ? 'Find a row' : 'Find an option'}
        aria-label={`Filter ${props.column.label}`}
        onInput={(event) => setFilter((event.target as HTMLInputElement).value)}
        onKeyDown={(event) => {
          event.stopPropagation();
          if (event.key === 'ArrowDown') setActive((i) => Math.min(i + 1, itemCount - 1));
          else if (event.key === 'ArrowUp') setActive((i) => Math.max(i - 1, 0));
          else if (event.key === 'Enter') {
            if (multiple && (event.metaKey || event.ctrlKey || itemCount === 0)) finishMultiple('down');
            else choose(active, 'down');
          } else if (event.key === 'Tab') multiple ? finishMultiple(event.shiftKey ? 'left' : 'right') : finish(props.value ?? null, event.shiftKey ? 'left' : 'right');
          else if (event.key === 'Escape') {
            if (multiple) finishMultiple('stay');
            else {
              done.current = true;
              props.cancel();
            }
          } else if (event.key === 'Backspace' && filter === '' && !multiple && current.length > 0) finish(null, 'stay');
          else return;
          event.preventDefault();
        }}
        onBlur={(event) => {
          if ((event.relatedTarget as HTMLElement | null)?.closest('.cell-editor-choice')) return;
          if (multiple) finishMultiple('stay');
          else if (!done.current) {
            done.current = true;
            props.cancel();
          }
        }}
      />
      <ul role="listbox" aria-multiselectable={multiple || undefined}>
        {itemCount === 0 && (
          <li class="choice-empty">
            {choices.length === 0 ? (isLink ? 'The linked table has no rows.' : props.createOption ? 'Type to add the first option.' : 'No options defined for this column.') : 'Nothing matches.'}
          </li>
        )}
        {shown.map((choice, i) => {
          const isSelected = multiple ? selected.includes(choice.value) : current.includes(choice.value);
          return (
            <li
              key={choice.value}
              role="option"
              aria-selected={isSelected}
              class={`choice-item ${i === active ? 'is-active' : ''}`}
              onMouseEnter={() => setActive(i)}
              onMouseDown={(event) => {
                event.preventDefault();
                pick(choice);
              }}
            >
              <span class="choice-check">{isSelected && <Icon name="check" size={14} />}</span>
              {choice.person ? (
                <span class="person">
                  <Avatar id={choice.person.id} name={choice.person.name} url={choice.person.avatarUrl} size={20} />
                  <span>{choice.person.name}</span>
                  {choice.person.kind === 'agent' && <Icon name="agent" size={12} />}
                </span>
              ) : isLink ? (
                <span class="link-chip">{choice.label}</span>
              ) : (
                <span class="pill" style={{ '--pill': choice.color }}>
                  {choice.label}
                </span>
              )}
            </li>
          );
        })}
        {creatable && (
          <li
            role="option"
            aria-selected={false}
            class={`choice-item choice-create ${active === shown.length ? 'is-active' : ''}`}
            onMouseEnter={() => setActive(shown.length)}
            onMouseDown={(event) => {
              event.preventDefault();
              create();
            }}
          >
            <span class="choice-check">
              <Icon name="plus" size={14} />
            </span>
            <span>
              Create <span class="pill">{typed}</span>
            </span>
          </li>
        )}
      </ul>
      {multiple && <div class="cell-editor-hint">Enter toggles · Ctrl+Enter or Esc to finish</div>}
      {!multiple && current.length > 0 && (
        <button class="choice-clear" onMouseDown={(event) => event.preventDefault()} onClick={() => finish(null, 'stay')}>
          Clear
        </button>
      )}
    </div>
  );
}

/** The rows of a link column's target sheet, by title. */
function linkChoices(column: ColumnDef, links: ReturnType<typeof useLinks>): Choice[] {
  const target = links ? targetSheetOf(column, links.surfaces) : null;
  if (!links || !target) return [];
  return links.model.rowIds(target.id).map((id) => ({ value: id, label: linkLabel(links.model, id) }));
}
