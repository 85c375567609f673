import { useState } from 'preact/hooks';
import { FormDialog } from './FormDialog';

/** One text field, submitted with Enter: renaming workspaces, surfaces and columns. */
export function RenameDialog(props: { title: string; label?: string; initial: string; onClose: () => void; onSubmit: (value: string) => Promise<void> | void; maxLength?: number }) {
  const [value, setValue] = useState(props.initial);
  const submit = async () => {
    if (!value.trim()) return;
    await props.onSubmit(value.trim());
    props.onClose();
  };
  return (
    <FormDialog title={props.title} id="rename-form" submitLabel="Save" disabled={!value.trim()} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>{props.label ?? 'Name'}</span>
        <input name="name" value={value} maxLength={props.maxLength ?? 200} onInput={(e) => setValue((e.target as HTMLInputElement).value)} onFocus={(e) => (e.target as HTMLInputElement).select()} />
      </label>
    </FormDialog>
  );
}
