/**
 * The files surface's side of the REST API (docs/FILES.md): listing, the
 * direct-upload flow with progress, previews and share links.
 */
import { api, ApiError, workspacePath } from '../lib/api';
import type { DirectUploadTicket, FileListing, FileRecord, FolderRecord, ShareTokenRecord } from '../../../src/model/schemas/files';
import type { Workspace } from '../workspace-context/types';

/** The files routes' own records (src/model/schemas/files.ts). */
export type FileItem = FileRecord;
export type Folder = FolderRecord;
export type { FileListing };
export type ShareLink = ShareTokenRecord;

export function filesPath(workspace: Workspace, suffix = '') {
  return workspacePath(workspace.org.slug, workspace.slug, `/files${suffix}`);
}

export function listFiles(workspace: Workspace, options: { surfaceSlug: string; folderId: string | null; q?: string; offset?: number }) {
  const query = new URLSearchParams({ surfaceSlug: options.surfaceSlug, sort: 'name', limit: '200' });
  if (options.q) query.set('q', options.q);
  else if (options.folderId) query.set('parentFolderId', options.folderId);
  if (options.offset) query.set('offset', String(options.offset));
  return api<FileListing>('GET', filesPath(workspace, `?${query}`));
}

export interface UploadProgress {
  loaded: number;
  total: number;
}

/** What the local store's one-shot upload URL looks like; its PUT completes the upload by itself. */
const LOCAL_UPLOAD_PATH = /^\/api\/file-uploads\/[^/]+$/;

/** Headers a browser sets itself and refuses from a script. */
const FORBIDDEN_HEADERS = new Set(['content-length', 'host', 'connection']);

/**
 * Uploads one file the documented direct way: the handshake reserves the
 * size against the quota, the bytes go up in one PUT whose progress is
 * reported, then the upload is completed (on the local store the PUT does
 * that itself). Resolves with the stored file.
 */
export function uploadFile(
  workspace: Workspace,
  target: { surfaceSlug: string; folderId: string | null },
  file: File,
  onProgress: (progress: UploadProgress) => void,
): { done: Promise<FileItem>; abort: () => void } {
  let xhr: XMLHttpRequest | null = null;
  let aborted = false;
  const done = (async () => {
    const ticket = await api<DirectUploadTicket>('POST', filesPath(workspace), {
      clientPayload: { surfaceSlug: target.surfaceSlug, parentFolderId: target.folderId, name: file.name, size: file.size, ...(file.type ? { contentType: file.type } : {}) },
    });
    const own = new URL(ticket.uploadUrl, window.location.origin);
    const local = LOCAL_UPLOAD_PATH.test(own.pathname) && own.searchParams.has('token');
    const url = local ? own.pathname + own.search : ticket.uploadUrl;
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      if (aborted) return reject(new ApiError(0, 'aborted', 'Upload cancelled.'));
      xhr = new XMLHttpRequest();
      xhr.open('PUT', url);
      for (const [name, value] of Object.entries(ticket.headers ?? {})) if (!FORBIDDEN_HEADERS.has(name.toLowerCase())) xhr.setRequestHeader(name, value);
      xhr.upload.onprogress = (event) => onProgress({ loaded: event.loaded, total: event.lengthComputable ? event.total : file.size });
      xhr.onload = () => resolve({ status: xhr!.status, text: xhr!.responseText });
      xhr.onerror = () => reject(new ApiError(0, 'network', navigator.onLine ? 'The upload was interrupted.' : 'You are offline.'));
      xhr.onabort = () => reject(new ApiError(0, 'aborted', 'Upload cancelled.'));
      xhr.send(file);
    });
    if (answer.status < 200 || answer.status >= 300) throw uploadError(answer);
    onProgress({ loaded: file.size, total: file.size });
    if (local) return JSON.parse(answer.text) as FileItem;
    return api<FileItem>('POST', filesPath(workspace, `/uploads/${encodeURIComponent(ticket.uploadId)}/complete`));
  })();
  return {
    done,
    abort: () => {
      aborted = true;
      xhr?.abort();
    },
  };
}

function uploadError(answer: { status: number; text: string }): ApiError {
  try {
    const body = JSON.parse(answer.text);
    if (body?.error) return new ApiError(answer.status, String(body.error.code ?? 'error'), String(body.error.message ?? `Upload failed (${answer.status}).`), body.error.details);
  } catch {
    // An object store's XML error, or nothing: say what we know.
  }
  return new ApiError(answer.status, 'error', `Upload failed (${answer.status}).`);
}

/** The text of a text-like file (the server decides which are: 400 for others and for files over 256 KB). */
export async function previewText(workspace: Workspace, file: FileItem): Promise<string | null> {
  const response = await fetch(filesPath(workspace, `/${encodeURIComponent(file.id)}/preview`), { credentials: 'same-origin' });
  if (response.status === 400) return null;
  if (!response.ok) throw new ApiError(response.status, 'error', `The preview could not be loaded (${response.status}).`);
  return response.text();
}

export type PreviewKind = 'image' | 'video' | 'audio' | 'pdf' | 'text';

/** How the browser can show a file: inline media, a PDF frame, or (perhaps) text. */
export function previewKindOf(file: FileItem): PreviewKind {
  const type = file.contentType.toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (type === 'application/pdf') return 'pdf';
  return 'text';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
