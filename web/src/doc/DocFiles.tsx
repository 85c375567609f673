/**
 * A doc in and out as a file (docs/IMPORT-EXPORT.md): the doc's "File"
 * menu imports a Word, HTML or Markdown file (into this doc, replacing its
 * content as one change with a version entry, or as a new doc) and
 * exports the doc as Word, PDF or HTML. What the file held that a doc
 * cannot is listed in the dialog before it closes: the server's warnings.
 */
import { useRef, useState } from 'preact/hooks';
import type { DocImportRecord } from '../../../src/model/schemas/imports';
import { api, messageOf, workspacePath } from '../lib/api';
import { downloadFrom } from '../lib/download';
import { navigate } from '../lib/router';
import { Button, Dialog, Menu } from '../ui/primitives';
import { showToast } from '../ui/toast';
import type { WorkspaceContext } from '../workspace-context/context';
import type { Surface } from '../workspace-context/types';

type ImportAnswer = DocImportRecord;

const ACCEPTED = '.docx,.html,.htm,.md,.markdown,application/vnd.openxmlformats-officedocument.wordprocessingml.document,text/html,text/markdown';
const FORMATS = [
  { format: 'docx', label: 'Word (.docx)' },
  { format: 'pdf', label: 'PDF' },
  { format: 'html', label: 'HTML' },
] as const;

export function DocFileMenu(props: { context: WorkspaceContext; surface: Surface; editable: boolean }) {
  const { context, surface, editable } = props;
  const { workspace } = context;
  const anchor = useRef<HTMLSpanElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [file, setFile] = useState<File | null>(null);
  const base = workspacePath(workspace.org.slug, workspace.slug);

  return (
    <span ref={anchor} class="doc-file-menu">
      <button type="button" class="doc-view-toggle" aria-haspopup="menu" data-testid="doc-file-menu" onClick={() => setMenuOpen(true)}>
        <span>Import / export</span>
      </button>
      <input
        ref={input}
        type="file"
        accept={ACCEPTED}
        hidden
        data-testid="doc-import-file"
        onChange={(event) => {
          const chosen = (event.target as HTMLInputElement).files?.[0];
          (event.target as HTMLInputElement).value = '';
          if (chosen) setFile(chosen);
        }}
      />
      {menuOpen && anchor.current && (
        <Menu
          anchor={anchor.current}
          align="right"
          onClose={() => setMenuOpen(false)}
          items={[
            { label: 'Import Word, HTML or Markdown…', icon: 'upload', disabled: !editable, hint: editable ? undefined : 'read only', onSelect: () => input.current?.click() },
            { separator: true, label: '' },
            ...FORMATS.map(({ format, label }) => ({
              label: `Export as ${label}`,
              icon: 'download',
              onSelect: () => downloadFrom(`${base}/doc?format=${format}&surface=${encodeURIComponent(surface.slug)}`, `${surface.slug}.${format}`),
            })),
          ]}
        />
      )}
      {file && (
        <DocImportDialog
          file={file}
          url={`${base}/doc/import?surface=${encodeURIComponent(surface.slug)}`}
          surfaceName={surface.name}
          onClose={() => setFile(null)}
          onNewDoc={async (made) => {
            await context.reload();
            navigate(`/${workspace.org.slug}/${workspace.slug}/${made.slug}`);
          }}
        />
      )}
    </span>
  );
}

function DocImportDialog(props: { file: File; url: string; surfaceName: string; onClose: () => void; onNewDoc: (surface: ImportAnswer['surface']) => Promise<void> }) {
  const [busy, setBusy] = useState<'replace' | 'new' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<ImportAnswer | null>(null);

  const submit = async (mode: 'replace' | 'new') => {
    setBusy(mode);
    setError(null);
    const form = new FormData();
    form.append('file', props.file, props.file.name);
    try {
      const result = await api<ImportAnswer>('POST', `${props.url}&mode=${mode}`, form);
      if (mode === 'new') await props.onNewDoc(result.surface);
      if (result.warnings.length === 0) {
        showToast(`Imported ${props.file.name}.`, 'success');
        props.onClose();
        return;
      }
      setAnswer(result);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(null);
    }
  };

  return (
    <Dialog
      title={`Import ${props.file.name}`}
      onClose={props.onClose}
      footer={
        answer ? (
          <Button variant="primary" onClick={props.onClose} data-testid="doc-import-done">
            Done
          </Button>
        ) : (
          <>
            <Button variant="ghost" onClick={props.onClose}>
              Cancel
            </Button>
            <Button busy={busy === 'new'} disabled={busy !== null} onClick={() => void submit('new')} data-testid="doc-import-new">
              As a new doc
            </Button>
            <Button variant="primary" busy={busy === 'replace'} disabled={busy !== null} onClick={() => void submit('replace')} data-testid="doc-import-replace">
              Replace this doc
            </Button>
          </>
        )
      }
    >
      {answer ? (
        <div data-testid="doc-import-warnings">
          <p>The file went in; the doc could not hold everything in it:</p>
          <ul>
            {answer.warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        </div>
      ) : (
        <p>
          Replace the content of “{props.surfaceName}” with the file (the doc's history keeps what it held), or make a new doc from it.
        </p>
      )}
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}
