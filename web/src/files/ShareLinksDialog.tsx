import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../lib/api';
import { timeAgo } from '../lib/format';
import { confirmDialog } from '../ui/dialogs';
import { Button, Dialog, IconButton, Spinner } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { Workspace } from '../workspace-context/types';
import { filesPath, type FileItem, type ShareLink } from './files-api';
import type { ShareTokenList } from '../../../src/model/schemas/files';

/**
 * A file's public links: anyone with one can see and download this file
 * (and nothing else) until it is revoked. Editors create and revoke them;
 * every member can see and copy the active ones.
 */
export function ShareLinksDialog(props: { workspace: Workspace; file: FileItem; canCreate: boolean; onClose: () => void }) {
  const path = filesPath(props.workspace, `/${encodeURIComponent(props.file.id)}/share`);
  const [links, setLinks] = useState<ShareLink[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    api<ShareTokenList>('GET', path).then(
      (answer) => setLinks(answer.tokens),
      (failure) => setError(messageOf(failure)),
    );
  useEffect(() => void load(), [props.file.id]);

  const create = async () => {
    setBusy(true);
    try {
      const link = await api<ShareLink>('POST', path);
      setLinks((list) => [link, ...(list ?? []).filter((l) => l.id !== link.id)]);
      await copy(link.url);
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (link: ShareLink) => {
    const confirmed = await confirmDialog({ title: 'Revoke link?', message: 'Anyone opening this link afterwards gets “not found”. Other links keep working.', confirmLabel: 'Revoke link', danger: true });
    if (!confirmed) return;
    try {
      await api('DELETE', `${path}?tokenId=${encodeURIComponent(link.id)}`);
      setLinks((list) => (list ?? []).filter((l) => l.id !== link.id));
    } catch (failure) {
      showError(failure);
    }
  };

  return (
    <Dialog
      title={`Share “${props.file.name}”`}
      onClose={props.onClose}
      footer={
        <>
          <Button variant="ghost" onClick={props.onClose}>
            Done
          </Button>
          {props.canCreate && (
            <Button variant="primary" icon="link" busy={busy} onClick={() => void create()}>
              {links?.length ? 'New link' : 'Create link'}
            </Button>
          )}
        </>
      }
    >
      <p class="muted">Anyone with a link can view and download this file, without an account, until the link is revoked.</p>
      {error && <p class="form-error">{error}</p>}
      {!links && !error && <Spinner />}
      {links && links.length === 0 && <p class="fine-print">No active links.{props.canCreate ? '' : ' Editors can create one.'}</p>}
      {links && links.length > 0 && (
        <ul class="share-links" aria-label="Active links">
          {links.map((link) => (
            <li key={link.id}>
              <input readOnly value={link.url} aria-label="Share link" onFocus={(e) => (e.target as HTMLInputElement).select()} />
              <IconButton icon="copy" label="Copy link" onClick={() => void copy(link.url)} />
              {props.canCreate && <IconButton icon="trash" label="Revoke link" onClick={() => void revoke(link)} />}
              <span class="fine-print">created {timeAgo(link.createdAt)}</span>
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}

async function copy(url: string) {
  try {
    await navigator.clipboard.writeText(url);
    showToast('Link copied.', 'success');
  } catch {
    // No clipboard permission (an insecure origin, a denied prompt): the field is there to copy by hand.
  }
}
