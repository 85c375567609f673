import type { JSX } from 'preact';
import { CellDisplay, type PeopleDirectory } from './cells';
import type { ColumnDef, RowSuggestionEntry, ShownValue } from './table-model';

/**
 * How the grid shows open row suggestions (docs/SUGGESTIONS.md "Tables"): a
 * suggested cell as the old value struck through beside the new one, a
 * suggested row as a tinted ghost row, a suggested delete as a struck row,
 * each with who suggested it and, for those who may decide, Accept and
 * Reject (the server applies an accepted one as the decider's change, and
 * the grid sees it arrive like any other).
 */

export const SUGGESTION_COLUMN_WIDTH = 260;

/** Accept or reject (editors), or withdraw (the author of an open suggestion). */
export type Decide = (suggestion: RowSuggestionEntry, decision: 'accept' | 'reject' | 'withdraw') => void;

/** A cell an update suggestion changes: the value now, struck, then the suggested one. A cell changed since the suggester read it is flagged. */
export function SuggestedCell(props: { column: ColumnDef; now: ShownValue | undefined; suggestion: RowSuggestionEntry; people: PeopleDirectory }): JSX.Element {
  const { column, suggestion } = props;
  const next = suggestion.values?.[column.key] as ShownValue | undefined;
  const base = suggestion.base?.[column.key];
  const changedSince = suggestion.base !== undefined && JSON.stringify(base ?? null) !== JSON.stringify(props.now ?? null);
  return (
    <span
      class={`cell-suggestion ${changedSince ? 'has-conflict' : ''}`}
      title={`${suggestion.author.name} suggests: ${plain(next)}${changedSince ? ` (changed since they read it: it was ${plain(base)})` : ''}`}
    >
      {(column.type === 'checkbox' || !empty(props.now)) && (
        <s class="suggested-old">
          <Shown column={column} value={props.now} people={props.people} />
        </s>
      )}
      <span class="suggested-new">
        <Shown column={column} value={next} people={props.people} />
      </span>
    </span>
  );
}

/** A cell of a suggested new row. */
export function GhostCell(props: { column: ColumnDef; value: ShownValue | undefined; people: PeopleDirectory }): JSX.Element {
  return (
    <span class="cell-content suggested-new">
      <Shown column={props.column} value={props.value} people={props.people} />
    </span>
  );
}

/** Who suggested what, and Accept / Reject for those who may decide. */
export function SuggestionActions(props: { suggestion: RowSuggestionEntry; more: number; canDecide: boolean; myId?: string; onDecide: Decide; left: number }): JSX.Element {
  const { suggestion } = props;
  const what = suggestion.kind === 'create' ? 'new row' : suggestion.kind === 'delete' ? 'delete' : 'edit';
  const long = suggestion.kind === 'create' ? 'suggests this row' : suggestion.kind === 'delete' ? 'suggests deleting this row' : 'suggests new values';
  return (
    <div class="grid-cell suggestion-actions" style={{ left: `${props.left}px`, width: `${SUGGESTION_COLUMN_WIDTH}px` }} onMouseDown={(event) => event.stopPropagation()}>
      <span class="suggestion-author" title={`${suggestion.author.name} ${long} (${new Date(suggestion.at).toLocaleString()})`}>
        <span class={`suggestion-kind is-${suggestion.author.principalType}`}>{suggestion.author.name}</span> · {what}
        {props.more > 0 && <span class="suggestion-more"> +{props.more}</span>}
      </span>
      {!props.canDecide && props.myId === suggestion.author.id && (
        <span class="suggestion-buttons">
          <button class="suggestion-reject" aria-label="Withdraw your suggestion" onClick={() => props.onDecide(suggestion, 'withdraw')}>
            Withdraw
          </button>
        </span>
      )}
      {props.canDecide && (
        <span class="suggestion-buttons">
          <button class="suggestion-accept" aria-label={`Accept the suggestion of ${suggestion.author.name}`} onClick={() => props.onDecide(suggestion, 'accept')}>
            Accept
          </button>
          <button class="suggestion-reject" aria-label={`Reject the suggestion of ${suggestion.author.name}`} onClick={() => props.onDecide(suggestion, 'reject')}>
            Reject
          </button>
        </span>
      )}
    </div>
  );
}

function Shown(props: { column: ColumnDef; value: ShownValue | undefined; people: PeopleDirectory }): JSX.Element | null {
  // A checkbox draws nothing as a display value: say it.
  if (props.column.type === 'checkbox') return <span class="cell-text">{props.value === true ? '✓ checked' : '☐ unchecked'}</span>;
  if (empty(props.value)) return <span class="cell-text suggestion-empty">(empty)</span>;
  return <CellDisplay column={props.column} value={props.value} people={props.people} />;
}

function empty(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function plain(value: unknown): string {
  return empty(value) ? 'empty' : typeof value === 'string' ? value : JSON.stringify(value);
}
