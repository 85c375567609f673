/**
 * The formula editor (docs/FORMULAS.md, docs/WEB.md "Tables"): a text box
 * that completes column names after `{` and function names as they are
 * typed, the list of functions with their one-line help, and the formula
 * checked as you type by the same model code the server checks a column
 * write with (so it works offline): what the formula gives, or the fault
 * and where it is.
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { FUNCTION_LIST, type FunctionSpec } from '../../../src/model/table/formulas/functions';
import { referenceTo } from '../../../src/model/table/formulas/parse';
import type { ColumnDef, FormulaTry } from './table-model';

type Suggestion = { kind: 'column'; column: ColumnDef } | { kind: 'function'; spec: FunctionSpec };

/** What the text before the caret is in the middle of: a `{reference`, a function name, or neither. */
function partAtCaret(text: string): { kind: 'column' | 'function'; word: string; start: number } | null {
  const reference = /\{([^{}\\]*)$/.exec(text);
  if (reference) return { kind: 'column', word: reference[1]!, start: reference.index };
  if (insideText(text)) return null;
  const name = /(?:^|[^A-Za-z0-9_{}])([A-Za-z_][A-Za-z0-9_]*)$/.exec(text);
  return name ? { kind: 'function', word: name[1]!, start: text.length - name[1]!.length } : null;
}

/** Whether the caret is inside a "text" value (no completion there). */
function insideText(text: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quote) {
      if (char === '\\') i++;
      else if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
  }
  return quote !== null;
}

const RESULT_WORDS: Record<string, string> = { number: 'a number', text: 'text', date: 'a date', checkbox: 'a checkbox (true or false)' };
const CATEGORIES: Array<[FunctionSpec['category'], string]> = [
  ['logical', 'Logic'],
  ['numeric', 'Numbers'],
  ['text', 'Text'],
  ['date', 'Dates'],
];

export function FormulaEditor(props: {
  value: string;
  columns: ColumnDef[];
  /** Checks the formula (TableModel.tryFormula). */
  check: (formula: string) => FormulaTry;
  onInput: (formula: string, result: FormulaTry) => void;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const [caret, setCaret] = useState(props.value.length);
  const [chosen, setChosen] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  const result = useMemo(() => props.check(props.value), [props.value, props.check]);

  const part = dismissed ? null : partAtCaret(props.value.slice(0, caret));
  const suggestions: Suggestion[] = useMemo(() => {
    if (!part) return [];
    const word = part.word.toLowerCase();
    if (part.kind === 'column') {
      return props.columns
        .filter((column) => column.key.toLowerCase().includes(word) || column.label.toLowerCase().includes(word))
        .slice(0, 12)
        .map((column) => ({ kind: 'column', column }));
    }
    if (word.length === 0) return [];
    return FUNCTION_LIST.filter((spec) => spec.name.toLowerCase().startsWith(word) && spec.name.toLowerCase() !== word)
      .slice(0, 12)
      .map((spec) => ({ kind: 'function', spec }));
  }, [part?.kind, part?.word, props.columns]);

  const pendingCaret = useRef<number | null>(null);
  useLayoutEffect(() => {
    if (pendingCaret.current === null || !area.current) return;
    area.current.focus();
    area.current.setSelectionRange(pendingCaret.current, pendingCaret.current);
    setCaret(pendingCaret.current);
    pendingCaret.current = null;
  });

  const update = (formula: string, at: number) => {
    setCaret(at);
    setChosen(0);
    setDismissed(false);
    props.onInput(formula, props.check(formula));
  };

  /** Replaces what is typed at the caret (a partial reference or name) with `text`. */
  const insert = (text: string, from: number) => {
    const before = props.value.slice(0, from);
    let after = props.value.slice(caret);
    if (text.startsWith('{') && after.startsWith('}')) after = after.slice(1);
    pendingCaret.current = before.length + text.length;
    update(before + text + after, before.length + text.length);
  };

  const accept = (suggestion: Suggestion) => {
    if (!part) return;
    if (suggestion.kind === 'column') insert(referenceTo(suggestion.column.key), part.start);
    else insert(`${suggestion.spec.name}(`, part.start);
  };

  const insertFunction = (spec: FunctionSpec) => {
    const at = area.current?.selectionStart ?? caret;
    const before = props.value.slice(0, at);
    const text = `${spec.name}(`;
    pendingCaret.current = at + text.length;
    update(before + text + props.value.slice(at), at + text.length);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    // The dialog closes on Escape and submits on Enter: the editor's own keys stay here.
    if (suggestions.length > 0 && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      event.preventDefault();
      setChosen((chosen + (event.key === 'ArrowDown' ? 1 : suggestions.length - 1)) % suggestions.length);
    } else if (suggestions.length > 0 && (event.key === 'Enter' || event.key === 'Tab')) {
      event.preventDefault();
      accept(suggestions[Math.min(chosen, suggestions.length - 1)]!);
    } else if (suggestions.length > 0 && event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      setDismissed(true);
    } else if (event.key === 'Enter') {
      // A formula is one expression: Enter submits the dialog rather than breaking the line.
      event.preventDefault();
      (event.currentTarget as HTMLElement).closest('form')?.requestSubmit();
    }
  };

  const listId = 'formula-suggestions';
  return (
    <div class="formula-editor">
      <textarea
        ref={area}
        class="formula-input"
        aria-label="Formula"
        spellcheck={false}
        rows={3}
        maxLength={4000}
        placeholder="IF({due} < TODAY(), &quot;late&quot;, &quot;&quot;)"
        value={props.value}
        role="combobox"
        aria-expanded={suggestions.length > 0}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-invalid={!result.ok && props.value.trim() !== '' ? 'true' : undefined}
        onInput={(event) => {
          const target = event.target as HTMLTextAreaElement;
          update(target.value, target.selectionStart ?? target.value.length);
        }}
        onKeyDown={onKeyDown}
        onKeyUp={(event) => {
          if (!['ArrowDown', 'ArrowUp', 'Enter', 'Tab', 'Escape'].includes(event.key)) setCaret((event.target as HTMLTextAreaElement).selectionStart ?? 0);
        }}
        onClick={(event) => setCaret((event.target as HTMLTextAreaElement).selectionStart ?? 0)}
      />
      {suggestions.length > 0 && (
        <ul id={listId} class="formula-suggestions" role="listbox" aria-label={part?.kind === 'column' ? 'Columns' : 'Functions'}>
          {suggestions.map((suggestion, i) => (
            <li
              key={suggestion.kind === 'column' ? suggestion.column.id : suggestion.spec.name}
              role="option"
              aria-selected={i === chosen}
              class={i === chosen ? 'is-chosen' : ''}
              onMouseDown={(event) => {
                event.preventDefault();
                accept(suggestion);
              }}
            >
              {suggestion.kind === 'column' ? (
                <>
                  <span class="formula-suggestion-name">{suggestion.column.label}</span>
                  <code>{referenceTo(suggestion.column.key)}</code>
                </>
              ) : (
                <>
                  <code class="formula-suggestion-name">{suggestion.spec.signature}</code>
                  <span class="muted">{suggestion.spec.help}</span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <FormulaStatus formula={props.value} result={result} />
      <details class="formula-functions">
        <summary>Functions</summary>
        {CATEGORIES.map(([category, title]) => (
          <section key={category} aria-label={title}>
            <h4>{title}</h4>
            <ul>
              {FUNCTION_LIST.filter((spec) => spec.category === category).map((spec) => (
                <li key={spec.name}>
                  <button type="button" class="formula-function" onClick={() => insertFunction(spec)} title={`${spec.example} → ${spec.result}`}>
                    {spec.name}
                  </button>
                  <span class="formula-function-help">
                    <code>{spec.signature}</code> {spec.help}
                  </span>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </details>
    </div>
  );
}

/** What the formula gives, or its fault with the place marked. */
function FormulaStatus(props: { formula: string; result: FormulaTry }) {
  if (props.formula.trim() === '') return <p class="formula-status muted">Type a formula: {'{column}'} references, numbers, "text", operators and functions.</p>;
  if (props.result.ok) {
    return (
      <p class="formula-status is-ok" aria-live="polite">
        Gives {RESULT_WORDS[props.result.resultType]}.
      </p>
    );
  }
  const { message, position } = props.result.error;
  return (
    <div class="formula-status is-error" aria-live="polite">
      <p role="alert">{message}</p>
      <pre class="formula-at" aria-hidden="true">
        {props.formula.slice(0, position)}
        <mark>{props.formula.slice(position, position + 1) || ' '}</mark>
        {props.formula.slice(position + 1)}
      </pre>
    </div>
  );
}
