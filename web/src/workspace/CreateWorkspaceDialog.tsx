import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { slugify } from '../lib/format';
import { navigate } from '../lib/router';
import { FormDialog } from '../ui/FormDialog';
import { AddressField } from './AddressField';
import type { Workspace } from '../workspace-context/types';
import { refreshWorkspaces } from '../workspace-context/workspaces-store';

export function CreateWorkspaceDialog(props: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [mode, setMode] = useState<'table' | 'doc'>('table');
  const effectiveSlug = slugEdited ? slug : slugify(name);

  const submit = async () => {
    const created = await api<Workspace>('POST', '/api/workspaces', { name: name.trim(), slug: effectiveSlug, mode });
    await refreshWorkspaces();
    props.onClose();
    navigate(`/${created.org.slug}/${created.slug}`);
  };

  return (
    <FormDialog title="New workspace" id="create-workspace" submitLabel="Create workspace" disabled={!name.trim()} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Name</span>
        <input name="name" required maxLength={200} placeholder="Product roadmap" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <AddressField
        value={effectiveSlug}
        onInput={(value) => {
          setSlugEdited(true);
          setSlug(value);
        }}
      />
      <fieldset class="field">
        <legend>Starts as</legend>
        <div class="choice-row">
          {(['table', 'doc'] as const).map((value) => (
            <label key={value} class={`choice ${mode === value ? 'is-selected' : ''}`}>
              <input type="radio" name="mode" value={value} checked={mode === value} onChange={() => setMode(value)} />
              <strong>{value === 'table' ? 'Table' : 'Doc'}</strong>
              <span>{value === 'table' ? 'Rows with typed columns' : 'A rich-text document'}</span>
            </label>
          ))}
        </div>
      </fieldset>
    </FormDialog>
  );
}
