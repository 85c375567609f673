import type { JSX } from 'preact';
import { formatDate } from '../lib/format';
import { Icon } from '../ui/icons';
import { Avatar } from '../ui/primitives';
import { linkLabel, useLinks } from './links';
import { isAbsoluteWebUrl, lookupText, type CellValue, type ColumnDef, type ColumnOption, type ComputedValue, type ShownValue } from './table-model';

/** Names the grid resolves person ids with (members and agents of the workspace). */
export type PeopleDirectory = Map<string, { id: string; name: string; avatarUrl: string | null; kind: 'user' | 'agent' }>;

const OPTION_COLORS: Record<string, string> = {
  gray: '#868e96',
  grey: '#868e96',
  blue: '#1c7ed6',
  green: '#2f9e44',
  red: '#e03131',
  yellow: '#f08c00',
  orange: '#e8590c',
  purple: '#7048e8',
  pink: '#d6336c',
  teal: '#0c8599',
};
const FALLBACK = ['#868e96', '#1c7ed6', '#2f9e44', '#f08c00', '#7048e8', '#d6336c', '#0c8599', '#e8590c'];

export function optionColor(option: ColumnOption | undefined, index: number): string {
  const named = option?.color ? (OPTION_COLORS[option.color.toLowerCase()] ?? (/^#[0-9a-f]{3,8}$/i.test(option.color) ? option.color : undefined)) : undefined;
  return named ?? FALLBACK[index % FALLBACK.length]!;
}

function OptionPill(props: { column: ColumnDef; value: string }) {
  const options = props.column.options ?? [];
  const index = options.findIndex((option) => option.value === props.value);
  const option = options[index];
  const color = optionColor(option, index < 0 ? 0 : index);
  return (
    <span class="pill" style={{ '--pill': color }}>
      {option?.label ?? props.value}
    </span>
  );
}

/** A cell as displayed (not edited). Values of the wrong type are shown as text rather than hidden. */
export function CellDisplay(props: { column: ColumnDef; value: ShownValue | undefined; people: PeopleDirectory }): JSX.Element | null {
  const { column } = props;
  if (props.value === null || props.value === undefined || props.value === '') return null;
  if (column.type === 'lookup') return <span class="cell-text cell-lookup">{Array.isArray(props.value) ? lookupText(props.value) : String(props.value)}</span>;
  if (column.type === 'formula' || column.type === 'rollup') return <ComputedDisplay column={column} value={props.value as ComputedValue} />;
  // Only lookup cells hold a list of values; every other cell is as stored.
  const value = props.value as CellValue;
  switch (column.type) {
    case 'link':
      return <LinkChips ids={Array.isArray(value) ? value : [String(value)]} />;
    case 'checkbox':
      return null;
    case 'number':
      return <span class="cell-number">{typeof value === 'number' ? value.toLocaleString() : String(value)}</span>;
    case 'status':
    case 'select': {
      const values = Array.isArray(value) ? value : [String(value)];
      return (
        <span class="pills">
          {values.map((item) => (
            <OptionPill key={item} column={column} value={item} />
          ))}
        </span>
      );
    }
    case 'date':
      return <span>{typeof value === 'string' ? formatDate(value) : String(value)}</span>;
    case 'url':
      return typeof value === 'string' && isAbsoluteWebUrl(value) ? (
        <a class="cell-link" href={value} target="_blank" rel="noopener noreferrer" onMouseDown={(event) => event.stopPropagation()}>
          {value.replace(/^https?:\/\//, '')}
        </a>
      ) : (
        <span>{String(value)}</span>
      );
    case 'person': {
      const ids = Array.isArray(value) ? value : [String(value)];
      return (
        <span class="people">
          {ids.map((id) => {
            const person = props.people.get(id);
            return (
              <span key={id} class="person">
                <Avatar id={id} name={person?.name ?? id} url={person?.avatarUrl} size={20} />
                <span>{person?.name ?? id}</span>
                {person?.kind === 'agent' && <Icon name="agent" size={12} />}
              </span>
            );
          })}
        </span>
      );
    }
    case 'longtext':
      return <span class="cell-text">{String(value).split('\n')[0]}</span>;
    default:
      return <span class="cell-text">{Array.isArray(value) ? value.join(', ') : String(value)}</span>;
  }
}

/** A formula or rollup cell: shown as its result type is, read-only; an error as its code, with its message on hover. */
function ComputedDisplay(props: { column: ColumnDef; value: ComputedValue }) {
  const { value } = props;
  if (value !== null && typeof value === 'object') {
    return (
      <span class="cell-error" title={value.message}>
        {value.error}
      </span>
    );
  }
  switch (props.column.resultType) {
    case 'checkbox':
      return (
        <span class={`checkbox is-computed ${value === true ? 'is-checked' : ''}`} role="img" aria-label={value === true ? 'Yes' : 'No'}>
          {value === true && <Icon name="check" size={12} />}
        </span>
      );
    case 'number':
      return <span class="cell-number">{typeof value === 'number' ? value.toLocaleString(undefined, { maximumFractionDigits: 10 }) : String(value)}</span>;
    case 'date':
      return <span>{typeof value === 'string' ? formatDate(value) : String(value)}</span>;
    default:
      return <span class="cell-text">{String(value)}</span>;
  }
}

/** A cell as one line of text (a card's title, a row's title in the comments panel). */
export function cellText(value: ShownValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return lookupText(value);
  return typeof value === 'object' ? value.error : String(value);
}

/** A link cell: the linked rows' titles, as chips. */
function LinkChips(props: { ids: string[] }) {
  const links = useLinks();
  return (
    <span class="link-chips">
      {props.ids.map((id) => (
        <span key={id} class="link-chip" data-row-id={id}>
          {links ? linkLabel(links.model, id) : id}
        </span>
      ))}
    </span>
  );
}

export const TYPE_LABELS: Record<string, { label: string; icon: string }> = {
  text: { label: 'Text', icon: 'text' },
  longtext: { label: 'Long text', icon: 'longtext' },
  number: { label: 'Number', icon: 'number' },
  status: { label: 'Status', icon: 'status' },
  select: { label: 'Select', icon: 'select' },
  checkbox: { label: 'Checkbox', icon: 'checkbox' },
  date: { label: 'Date', icon: 'calendar' },
  url: { label: 'URL', icon: 'url' },
  person: { label: 'Person', icon: 'person' },
  link: { label: 'Link to rows', icon: 'link' },
  lookup: { label: 'Lookup', icon: 'search' },
  formula: { label: 'Formula', icon: 'formula' },
  rollup: { label: 'Rollup', icon: 'rollup' },
};

/** Default display widths by type when a column has none. */
export function columnWidth(column: ColumnDef): number {
  if (typeof column.width === 'number' && column.width > 0) return Math.max(60, Math.min(column.width, 1200));
  switch (column.type) {
    case 'checkbox':
      return 96;
    case 'number':
    case 'date':
      return 140;
    case 'status':
      return 150;
    case 'longtext':
      return 300;
    case 'url':
    case 'select':
    case 'person':
    case 'link':
    case 'lookup':
    case 'formula':
    case 'rollup':
      return 200;
    default:
      return column.key === 'title' ? 280 : 200;
  }
}
