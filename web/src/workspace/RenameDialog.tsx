import { useState } from 'preact/hooks';
import { messageOf } from '../lib/api';
import { Button, Dialog } from '../ui/primitives';

/** One text field, submitted with Enter: renaming workspaces, surfaces and columns. */
export function RenameDialog(props: { title: string; label?: string; initial: string; onClose: () => void; onSubmit: (value: string) => Promise<void> | void; maxLength?: number }) {
  const [value, setValue] = useState(props.initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!value.trim()) return;
    setBusy(true);
    try {
      await props.onSubmit(value.trim());
      props.onClose();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={props.title}
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form="rename-form" busy={busy} disabled={!value.trim()}>
            Save
          </Button>
        </>
      }
    >
      <form id="rename-form" class="form" onSubmit={submit}>
        <label class="field">
          <span>{props.label ?? 'Name'}</span>
          <input name="name" value={value} maxLength={props.maxLength ?? 200} onInput={(e) => setValue((e.target as HTMLInputElement).value)} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        </label>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
