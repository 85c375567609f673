import { useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { slugify } from '../lib/format';
import { navigate } from '../lib/router';
import { Button, Dialog } from '../ui/primitives';
import type { Workspace } from './types';
import { refreshWorkspaces } from './workspaces-store';

export function CreateWorkspaceDialog(props: { onClose: () => void }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [mode, setMode] = useState<'table' | 'doc'>('table');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const effectiveSlug = slugEdited ? slug : slugify(name);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api<Workspace>('POST', '/api/workspaces', { name: name.trim(), slug: effectiveSlug, mode });
      await refreshWorkspaces();
      props.onClose();
      navigate(`/${created.org.slug}/${created.slug}`);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      title="New workspace"
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Cancel
          </Button>
          <Button variant="primary" type="submit" form="create-workspace" busy={busy} disabled={!name.trim()}>
            Create workspace
          </Button>
        </>
      }
    >
      <form id="create-workspace" onSubmit={submit} class="form">
        <label class="field">
          <span>Name</span>
          <input name="name" required maxLength={200} placeholder="Product roadmap" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Address</span>
          <div class="input-prefix">
            <span>/</span>
            <input
              name="slug"
              required
              pattern="[a-z0-9]+(-[a-z0-9]+)*"
              value={effectiveSlug}
              onInput={(e) => {
                setSlugEdited(true);
                setSlug((e.target as HTMLInputElement).value);
              }}
            />
          </div>
        </label>
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
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
