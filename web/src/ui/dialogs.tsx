import { useState } from 'preact/hooks';
import { createStore, useStore } from '../lib/store';
import { Button, Dialog } from './primitives';

/**
 * The app's own confirm and prompt, in place of `window.confirm` and
 * `window.prompt` (which block the page, cannot be styled, and are
 * suppressed in some embedded browsers). Awaitable, so a call site reads
 * like the native one: `if (!(await confirmDialog({...}))) return;`.
 */
type Request = { id: number } & (
  | { kind: 'confirm'; options: ConfirmOptions; resolve: (confirmed: boolean) => void }
  | { kind: 'prompt'; options: PromptOptions; resolve: (value: string | null) => void }
);

export interface ConfirmOptions {
  title: string;
  message: string;
  confirmLabel: string;
  danger?: boolean;
}

export interface PromptOptions {
  title: string;
  label: string;
  initial?: string;
  /** Selects the initial text when the dialog opens, so typing replaces a suggestion. */
  selectInitial?: boolean;
  placeholder?: string;
  submitLabel?: string;
  /** A hint for on-screen keyboards; the text is not validated as a URL (a bare `example.com` is fine). */
  inputMode?: 'text' | 'url';
}

const current = createStore<Request | null>(null);
let nextId = 1;

function ask(request: DistributiveOmit<Request, 'id'>) {
  // A second question replaces an open one, which then counts as cancelled.
  const open = current.get();
  if (open) open.kind === 'confirm' ? open.resolve(false) : open.resolve(null);
  current.set({ ...request, id: nextId++ } as Request);
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => ask({ kind: 'confirm', options, resolve }));
}

/** Resolves with the trimmed text, or null when cancelled or left empty. */
export function promptDialog(options: PromptOptions): Promise<string | null> {
  return new Promise((resolve) => ask({ kind: 'prompt', options, resolve }));
}

/** Mounted once by the app, beside the toasts. */
export function DialogHost() {
  const request = useStore(current);
  if (!request) return null;
  const finish = (answer: boolean | string | null) => {
    if (current.get() === request) current.set(null);
    (request.resolve as (value: boolean | string | null) => void)(answer);
  };
  return request.kind === 'confirm' ? (
    <ConfirmView key={request.id} options={request.options} onAnswer={finish} />
  ) : (
    <PromptView key={request.id} options={request.options} onAnswer={(value) => finish(value)} />
  );
}

function ConfirmView(props: { options: ConfirmOptions; onAnswer: (confirmed: boolean) => void }) {
  const { options } = props;
  return (
    <Dialog
      title={options.title}
      onClose={() => props.onAnswer(false)}
      footer={
        <>
          <Button variant="ghost" onClick={() => props.onAnswer(false)}>
            Cancel
          </Button>
          <Button variant={options.danger ? 'danger' : 'primary'} onClick={() => props.onAnswer(true)}>
            {options.confirmLabel}
          </Button>
        </>
      }
    >
      <p class="dialog-message">{options.message}</p>
    </Dialog>
  );
}

function PromptView(props: { options: PromptOptions; onAnswer: (value: string | null) => void }) {
  const { options } = props;
  const [value, setValue] = useState(options.initial ?? '');
  const submit = (event: Event) => {
    event.preventDefault();
    props.onAnswer(value.trim() || null);
  };
  return (
    <Dialog
      title={options.title}
      onClose={() => props.onAnswer(null)}
      footer={
        <>
          <Button variant="ghost" onClick={() => props.onAnswer(null)}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form="prompt-form" disabled={!value.trim()}>
            {options.submitLabel ?? 'OK'}
          </Button>
        </>
      }
    >
      <form id="prompt-form" class="form" onSubmit={submit}>
        <label class="field">
          <span>{options.label}</span>
          <input name="value" type="text" inputMode={options.inputMode ?? 'text'} value={value} placeholder={options.placeholder} onFocus={options.selectInitial ? (e) => (e.target as HTMLInputElement).select() : undefined} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
        </label>
      </form>
    </Dialog>
  );
}
