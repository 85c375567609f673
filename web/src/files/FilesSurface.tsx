import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf, onThisOrigin } from '../lib/api';
import { useNewestRequest } from '../lib/newest-request';
import { timeAgo } from '../lib/format';
import { confirmDialog, promptDialog } from '../ui/dialogs';
import { Icon } from '../ui/icons';
import { Button, EmptyState, IconButton, Menu, Spinner, type MenuItem } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { SurfaceViewProps } from '../workspace-context/context';
import { useReloadOnEvents } from '../workspace-context/workspace-events';
import { filesPath, formatBytes, listFiles, uploadFile, type FileItem, type FileListing, type Folder } from './files-api';
import { FilePreview } from './FilePreview';
import { ShareLinksDialog } from './ShareLinksDialog';

interface Upload {
  key: number;
  name: string;
  loaded: number;
  total: number;
  error: string | null;
  abort: () => void;
}

let nextUploadKey = 1;

/**
 * A files surface: a folder at a time (breadcrumbs to go back up), uploads
 * with progress (the picker or a drop), previews, share links, and the
 * others' changes arriving live (`file.*` and `folder.*` events reload the
 * folder on view).
 */
export function FilesSurface(props: SurfaceViewProps) {
  const { workspace, abilities } = props.context;
  const surface = props.surface;
  const [path, setPath] = useState<Folder[]>([]);
  const folder = path[path.length - 1] ?? null;
  const [query, setQuery] = useState('');
  const [listing, setListing] = useState<FileListing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [preview, setPreview] = useState<FileItem | null>(null);
  const [sharing, setSharing] = useState<FileItem | null>(null);
  const [menu, setMenu] = useState<{ anchor: HTMLElement; items: MenuItem[] } | null>(null);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const editable = abilities.edit;
  const target = { surfaceSlug: surface.slug, folderId: folder?.id ?? null };

  // Only the newest listing request may show: an older one (another folder, an earlier query) can answer last.
  const listingRequest = useNewestRequest();
  const load = useCallback(async () => {
    const ticket = listingRequest.start();
    try {
      const result = await listFiles(workspace, { ...target, q: query.trim() || undefined });
      if (!listingRequest.isNewest(ticket)) return;
      setListing(result);
      setError(null);
    } catch (failure) {
      if (listingRequest.isNewest(ticket)) setError(messageOf(failure));
    }
  }, [workspace.id, surface.id, folder?.id, query]);

  useEffect(() => {
    setListing(null);
    void load();
  }, [load]);

  // Someone else's upload, rename or delete shows without a reload (debounced: a folder archive is many events).
  useReloadOnEvents(workspace, (name) => name.startsWith('file.') || name.startsWith('folder.'), load, {
    quietMs: 120,
    concerns: (event) => (event.surface?.id ?? event.data?.surfaceId) === surface.id,
  });

  const loadMore = async () => {
    if (!listing?.nextOffset) return;
    try {
      const page = await listFiles(workspace, { ...target, q: query.trim() || undefined, offset: listing.nextOffset });
      setListing({ folders: listing.folders, files: [...listing.files, ...page.files], nextOffset: page.nextOffset });
    } catch (failure) {
      showError(failure);
    }
  };

  const startUploads = (files: File[]) => {
    for (const file of files) {
      const key = nextUploadKey++;
      const update = (change: Partial<Upload>) => setUploads((list) => list.map((u) => (u.key === key ? { ...u, ...change } : u)));
      const { done, abort } = uploadFile(workspace, target, file, (progress) => update({ loaded: progress.loaded, total: progress.total }));
      setUploads((list) => [...list, { key, name: file.name, loaded: 0, total: file.size, error: null, abort }]);
      done.then(
        () => {
          setUploads((list) => list.filter((u) => u.key !== key));
          void load();
        },
        (failure) => update({ error: messageOf(failure) }),
      );
    }
  };

  const createFolder = async () => {
    const name = await promptDialog({ title: 'New folder', label: 'Name', submitLabel: 'Create folder' });
    if (!name) return;
    try {
      await api('POST', filesPath(workspace, '/folders'), { surfaceSlug: surface.slug, parentFolderId: folder?.id ?? null, name });
      await load();
    } catch (failure) {
      showError(failure);
    }
  };

  const rename = async (kind: 'file' | 'folder', item: { id: string; name: string }) => {
    const name = await promptDialog({ title: `Rename ${kind}`, label: 'Name', initial: item.name, submitLabel: 'Rename' });
    if (!name || name === item.name) return;
    try {
      await api('PATCH', filesPath(workspace, `${kind === 'folder' ? '/folders' : ''}/${encodeURIComponent(item.id)}`), { name });
      await load();
    } catch (failure) {
      showError(failure);
    }
  };

  const remove = async (kind: 'file' | 'folder', item: { id: string; name: string }) => {
    const confirmed = await confirmDialog(
      kind === 'folder'
        ? { title: 'Delete folder?', message: `“${item.name}” and everything in it go to the trash.`, confirmLabel: 'Delete folder', danger: true }
        : { title: 'Delete file?', message: `“${item.name}” goes to the trash; it can be restored for 30 days.`, confirmLabel: 'Delete', danger: true },
    );
    if (!confirmed) return;
    try {
      await api('DELETE', filesPath(workspace, `${kind === 'folder' ? '/folders' : ''}/${encodeURIComponent(item.id)}`));
      showToast(`Deleted ${item.name}.`, 'success');
      await load();
    } catch (failure) {
      showError(failure);
    }
  };

  const fileMenu = (file: FileItem, anchor: HTMLElement) =>
    setMenu({
      anchor,
      items: [
        { label: 'Preview', icon: 'eye', onSelect: () => setPreview(file) },
        { label: 'Download', icon: 'download', onSelect: () => download(file) },
        { label: 'Share link…', icon: 'link', onSelect: () => setSharing(file) },
        ...(editable
          ? [
              { separator: true, label: '' },
              { label: 'Rename…', icon: 'edit', onSelect: () => void rename('file', file) },
              { label: 'Delete', icon: 'trash', danger: true, onSelect: () => void remove('file', file) },
            ]
          : []),
      ],
    });

  const folderMenu = (entry: Folder, anchor: HTMLElement) =>
    setMenu({
      anchor,
      items: [
        { label: 'Open', icon: 'files', onSelect: () => openFolder(entry) },
        { label: 'Rename…', icon: 'edit', disabled: !editable, onSelect: () => void rename('folder', entry) },
        { label: 'Delete', icon: 'trash', danger: true, disabled: !editable, onSelect: () => void remove('folder', entry) },
      ],
    });

  const openFolder = (entry: Folder) => {
    setQuery('');
    setPath(query ? [entry] : [...path, entry]);
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const files = [...(event.dataTransfer?.files ?? [])];
    if (editable && files.length) startUploads(files);
  };

  const empty = listing && listing.folders.length === 0 && listing.files.length === 0;

  return (
    <div
      class={`files-surface ${dragging ? 'is-dragging' : ''}`}
      onDragOver={(event) => {
        if (!editable || !event.dataTransfer?.types.includes('Files')) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(event) => event.currentTarget === event.target && setDragging(false)}
      onDrop={onDrop}
    >
      <div class="files-toolbar">
        <nav class="breadcrumbs" aria-label="Folder">
          <button class="crumb-button" onClick={() => setPath([])} aria-current={path.length === 0 ? 'location' : undefined}>
            {surface.name}
          </button>
          {path.map((entry, index) => (
            <span key={entry.id} class="crumb-item">
              <Icon name="chevronRight" size={14} class="crumb-sep" />
              <button class="crumb-button" onClick={() => setPath(path.slice(0, index + 1))} aria-current={index === path.length - 1 ? 'location' : undefined}>
                {entry.name}
              </button>
            </span>
          ))}
        </nav>
        <span class="toolbar-spacer" />
        <label class="files-search">
          <Icon name="search" size={14} />
          <input type="search" placeholder="Search files" aria-label="Search files" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} />
        </label>
        {!editable && <span class="badge badge-muted">Read only</span>}
        {editable && (
          <>
            <Button icon="folderPlus" onClick={() => void createFolder()}>
              New folder
            </Button>
            <Button variant="primary" icon="upload" onClick={() => picker.current?.click()}>
              Upload
            </Button>
            <input
              ref={picker}
              type="file"
              multiple
              hidden
              data-testid="file-picker"
              onChange={(event) => {
                const input = event.currentTarget as HTMLInputElement;
                startUploads([...(input.files ?? [])]);
                input.value = '';
              }}
            />
          </>
        )}
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Uploads">
          {uploads.map((upload) => {
            const percent = upload.total ? Math.round((upload.loaded / upload.total) * 100) : 0;
            return (
              <li key={upload.key} class={upload.error ? 'is-failed' : ''}>
                <Icon name={upload.error ? 'x' : 'upload'} size={14} />
                <span class="upload-name">{upload.name}</span>
                {upload.error ? (
                  <span class="upload-error" role="alert">
                    {upload.error}
                  </span>
                ) : (
                  <>
                    <progress max={100} value={percent} aria-label={`Uploading ${upload.name}`} />
                    <span class="upload-percent">{percent}%</span>
                  </>
                )}
                <IconButton
                  icon="x"
                  label={upload.error ? `Dismiss ${upload.name}` : `Cancel ${upload.name}`}
                  onClick={() => {
                    upload.abort();
                    setUploads((list) => list.filter((u) => u.key !== upload.key));
                  }}
                />
              </li>
            );
          })}
        </ul>
      )}
      <div class="files-body">
        {error ? (
          <p class="form-error">{error}</p>
        ) : !listing ? (
          <Spinner />
        ) : empty ? (
          <EmptyState
            icon="files"
            title={query ? 'Nothing matches' : folder ? 'This folder is empty' : 'No files yet'}
            action={
              editable && !query ? (
                <Button variant="primary" icon="upload" onClick={() => picker.current?.click()}>
                  Upload files
                </Button>
              ) : undefined
            }
          >
            {query ? `No file or folder here is named like “${query}”.` : editable ? 'Drop files here or upload them; agents can add files through the API.' : 'Files added by others show up here.'}
          </EmptyState>
        ) : (
          <table class="file-table">
            <thead>
              <tr>
                <th class="file-name-cell">Name</th>
                <th class="file-size">Size</th>
                <th>Modified</th>
                <th>Added by</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {listing.folders.map((entry) => (
                <tr key={entry.id} class="folder-row" data-name={entry.name}>
                  <td class="file-name-cell">
                    <button class="file-open" onClick={() => openFolder(entry)}>
                      <span class="file-icon folder-icon">
                        <Icon name="files" />
                      </span>
                      <span class="file-name">{entry.name}</span>
                    </button>
                  </td>
                  <td class="file-size">—</td>
                  <td>{timeAgo(entry.createdAt)}</td>
                  <td>{entry.createdBy?.name ?? ''}</td>
                  <td class="file-actions">
                    <IconButton icon="more" label={`More for ${entry.name}`} onClick={(event) => folderMenu(entry, event.currentTarget as HTMLElement)} />
                  </td>
                </tr>
              ))}
              {listing.files.map((file) => (
                <tr key={file.id} class="file-row" data-name={file.name}>
                  <td class="file-name-cell">
                    <button class="file-open" onClick={() => setPreview(file)} aria-label={`Preview ${file.name}`}>
                      <span class="file-icon">{file.thumbUrl ? <img src={onThisOrigin(file.thumbUrl)} alt="" loading="lazy" /> : <Icon name="file" />}</span>
                      <span class="file-name">{file.name}</span>
                    </button>
                  </td>
                  <td class="file-size">{formatBytes(file.size)}</td>
                  <td>
                    <time dateTime={file.updatedAt} title={new Date(file.updatedAt).toLocaleString()}>
                      {timeAgo(file.updatedAt)}
                    </time>
                  </td>
                  <td>{file.createdBy?.name ?? ''}</td>
                  <td class="file-actions">
                    <IconButton icon="link" label={`Share ${file.name}`} onClick={() => setSharing(file)} />
                    <IconButton icon="more" label={`More for ${file.name}`} onClick={(event) => fileMenu(file, event.currentTarget as HTMLElement)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {listing?.nextOffset != null && (
          <div class="files-more">
            <Button variant="ghost" onClick={() => void loadMore()}>
              Show more
            </Button>
          </div>
        )}
      </div>
      {dragging && (
        <div class="drop-hint" aria-hidden="true">
          <Icon name="upload" size={22} />
          <span>Drop to upload to {folder?.name ?? surface.name}</span>
        </div>
      )}
      {menu && <Menu anchor={menu.anchor} items={menu.items} onClose={() => setMenu(null)} align="right" />}
      {preview && <FilePreview workspace={workspace} file={preview} onClose={() => setPreview(null)} onShare={() => setSharing(preview)} />}
      {sharing && <ShareLinksDialog workspace={workspace} file={sharing} canCreate={editable} onClose={() => setSharing(null)} />}
    </div>
  );
}

function download(file: FileItem) {
  const link = document.createElement('a');
  link.href = onThisOrigin(file.url);
  link.download = file.name;
  document.body.append(link);
  link.click();
  link.remove();
}
