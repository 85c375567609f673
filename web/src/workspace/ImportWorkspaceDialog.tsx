/**
 * A workspace from a folder (docs/IMPORT-EXPORT.md): a zip this server
 * exported, or a Notion "Markdown & CSV" export, sent to
 * `POST /api/workspaces/import`; the job it starts is then followed with a
 * progress bar until it ends, and the entries that could not go in are
 * listed by their path before the dialog closes.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JobRecord } from '../../../src/model/schemas/imports';
import { api } from '../lib/api';
import { slugify } from '../lib/format';
import { navigate } from '../lib/router';
import { FormDialog } from '../ui/FormDialog';
import { AddressField } from './AddressField';
import { Button, Dialog } from '../ui/primitives';
import { refreshWorkspaces, workspaceList } from '../workspace-context/workspaces-store';

/** How often a running job is read again. */
const POLL_MS = 400;

export function ImportWorkspaceDialog(props: { orgSlug: string; onClose: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [job, setJob] = useState<JobRecord | null>(null);
  const suggestedName = name.trim() || (file ? file.name.replace(/\.zip$/i, '').replace(/\s+[0-9a-f]{32}$/i, '') : '');
  const effectiveSlug = slugEdited ? slug : slugify(suggestedName);

  const submit = async () => {
    if (!file) return;
    const form = new FormData();
    if (name.trim()) form.append('name', name.trim());
    form.append('slug', effectiveSlug);
    form.append('file', file, file.name);
    setJob((await api<{ job: JobRecord }>('POST', '/api/workspaces/import', form)).job);
  };

  if (job) return <ImportProgress job={job} orgSlug={props.orgSlug} onClose={props.onClose} />;
  return (
    <FormDialog title="Import a workspace" id="import-workspace" submitLabel="Import" disabled={!file || !effectiveSlug} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Folder (.zip)</span>
        <input
          type="file"
          name="file"
          accept=".zip,application/zip"
          required
          data-testid="workspace-import-file"
          onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)}
        />
        <small class="muted">A workspace exported from here, or a Notion “Markdown &amp; CSV” export.</small>
      </label>
      <label class="field">
        <span>Name</span>
        <input name="name" maxLength={200} placeholder={suggestedName || 'The name the folder gives itself'} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <AddressField
        value={effectiveSlug}
        onInput={(value) => {
          setSlugEdited(true);
          setSlug(value);
        }}
      />
    </FormDialog>
  );
}

function ImportProgress(props: { job: JobRecord; orgSlug: string; onClose: () => void }) {
  const [job, setJob] = useState(props.job);
  const [readError, setReadError] = useState<string | null>(null);

  useEffect(() => {
    if (job.status !== 'running') {
      void refreshWorkspaces();
      return;
    }
    const timer = setTimeout(() => {
      api<{ job: JobRecord }>('GET', `/api/jobs/${encodeURIComponent(job.id)}`).then(
        (answer) => {
          setReadError(null);
          setJob(answer.job);
        },
        // A read that fails (a moment offline) is tried again; the job goes on on the server either way.
        (error: Error) => {
          setReadError(error.message);
          setJob((current) => ({ ...current }));
        },
      );
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [job]);

  const { done, total } = job.progress;
  const open = async () => {
    const made = job.workspace;
    if (!made) return;
    // The import made the workspace in the person's own organisation, which need not be the one on screen.
    await refreshWorkspaces();
    const orgSlug = workspaceList.get().items.find((workspace) => workspace.id === made.id)?.org.slug ?? props.orgSlug;
    props.onClose();
    navigate(`/${orgSlug}/${made.slug}`);
  };
  const title = job.status === 'running' ? 'Importing…' : job.status === 'done' ? 'Imported' : 'The import failed';

  return (
    <Dialog
      title={title}
      onClose={props.onClose}
      footer={
        job.status === 'done' && job.workspace ? (
          <Button variant="primary" onClick={() => void open()} data-testid="workspace-import-open">
            Open {job.workspace.name}
          </Button>
        ) : (
          <Button variant={job.status === 'running' ? 'ghost' : 'primary'} onClick={props.onClose}>
            {job.status === 'running' ? 'Go on in the background' : 'Close'}
          </Button>
        )
      }
    >
      <div class="import-progress" data-testid="workspace-import-progress" data-status={job.status}>
        <progress value={done} max={Math.max(total, 1)} aria-label="Import progress" />
        <span class="muted">
          {total > 0 ? `${done.toLocaleString()} of ${total.toLocaleString()} entries` : 'Reading the archive…'}
          {readError ? ` (${readError}; trying again)` : ''}
        </span>
        {job.errors.length > 0 && (
          <div class="import-errors" role={job.status === 'failed' ? 'alert' : undefined} data-testid="workspace-import-errors">
            <p>{job.status === 'failed' ? 'Nothing was made:' : 'These entries could not go in; everything else did:'}</p>
            <ul>
              {job.errors.map((error, i) => (
                <li key={i}>
                  {error.path ? <code>{error.path}</code> : 'The archive'}: {error.message}
                </li>
              ))}
            </ul>
          </div>
        )}
      </div>
    </Dialog>
  );
}
