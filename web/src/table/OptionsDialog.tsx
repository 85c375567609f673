import { useState } from 'preact/hooks';
import { messageOf } from '../lib/api';
import { Button, Dialog, IconButton } from '../ui/primitives';
import { optionColor } from './cells';
import type { ColumnDef, ColumnOption } from './table-model';
import { keyFromLabel } from './table-model';

const COLORS = ['gray', 'blue', 'green', 'yellow', 'orange', 'red', 'purple', 'pink', 'teal'];

/** The options of a status or select column: labels, colours, order. Values stay stable once made. */
export function OptionsDialog(props: { column: ColumnDef; onClose: () => void; onSave: (options: ColumnOption[]) => void }) {
  const [options, setOptions] = useState<ColumnOption[]>(props.column.options ?? []);
  const [error, setError] = useState<string | null>(null);
  // Values of options added in this dialog: they take a value made from their label on save.
  const [created] = useState(() => new Set<string>());
  const change = (index: number, patch: Partial<ColumnOption>) => setOptions((list) => list.map((option, i) => (i === index ? { ...option, ...patch } : option)));
  const add = () =>
    setOptions((list) => {
      const taken = new Set(list.map((option) => option.value));
      let n = list.length + 1;
      while (taken.has(`option_${n}`)) n++;
      created.add(`option_${n}`);
      return [...list, { value: `option_${n}`, label: `Option ${n}`, color: COLORS[list.length % COLORS.length] }];
    });
  const save = () => {
    const cleaned = options.map((option) => ({ ...option, label: option.label.trim() || option.value }));
    try {
      props.onSave(cleaned.map((option) => (created.has(option.value) ? { ...option, value: uniqueValue(option, cleaned) } : option)));
      props.onClose();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <Dialog
      title={`Options of ${props.column.label}`}
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Cancel
          </Button>
          <Button variant="primary" onClick={save}>
            Save
          </Button>
        </>
      }
    >
      <ul class="option-list">
        {options.map((option, i) => (
          <li key={i}>
            <select aria-label="Colour" value={option.color ?? ''} onChange={(e) => change(i, { color: (e.target as HTMLSelectElement).value })} style={{ color: optionColor(option, i) }}>
              {COLORS.map((color) => (
                <option key={color} value={color}>
                  ● {color}
                </option>
              ))}
            </select>
            <input aria-label="Label" value={option.label} maxLength={100} onInput={(e) => change(i, { label: (e.target as HTMLInputElement).value })} />
            <IconButton icon="chevronUp" label={`Move ${option.label} up`} disabled={i === 0} onClick={() => setOptions((list) => swap(list, i, i - 1))} />
            <IconButton icon="chevronDown" label={`Move ${option.label} down`} disabled={i === options.length - 1} onClick={() => setOptions((list) => swap(list, i, i + 1))} />
            <IconButton icon="trash" label={`Remove ${option.label}`} onClick={() => setOptions((list) => list.filter((_, j) => j !== i))} />
          </li>
        ))}
      </ul>
      <Button icon="plus" onClick={add}>
        Add option
      </Button>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}

/** A value for an option created here: made from its label, unique among the others. */
function uniqueValue(option: ColumnOption, all: ColumnOption[]): string {
  const base = keyFromLabel(option.label);
  const others = new Set(all.filter((o) => o !== option).map((o) => o.value));
  let value = base;
  for (let n = 2; others.has(value); n++) value = `${base}_${n}`;
  return value;
}

/** An option typed into a cell (docs/WEB.md "Tables"): its label as typed, a value made from it, the next colour. */
export function optionFromLabel(label: string, existing: ColumnOption[]): ColumnOption {
  const option = { value: '', label: label.trim(), color: COLORS[existing.length % COLORS.length] };
  return { ...option, value: uniqueValue(option, existing) };
}

function swap<T>(list: T[], a: number, b: number): T[] {
  const copy = [...list];
  [copy[a], copy[b]] = [copy[b]!, copy[a]!];
  return copy;
}
