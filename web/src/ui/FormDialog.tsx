import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../lib/api';
import { Button, Dialog } from './primitives';

/**
 * A dialog around one form: Cancel and a submit button in the footer, the
 * button busy while `onSubmit` runs, and its failure (the server's message)
 * shown in the form, which keeps what was typed.
 */
export function FormDialog(props: {
  title: string;
  /** The form's id, which the footer's submit button names. */
  id: string;
  submitLabel: string;
  disabled?: boolean;
  wide?: boolean;
  onClose: () => void;
  onSubmit: () => Promise<void>;
  children: ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      title={props.title}
      wide={props.wide}
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form={props.id} busy={busy} disabled={props.disabled}>
            {props.submitLabel}
          </Button>
        </>
      }
    >
      <form id={props.id} class="form" onSubmit={submit}>
        {props.children}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
