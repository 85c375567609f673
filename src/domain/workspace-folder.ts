import path from 'node:path/posix';
import { Readable } from 'node:stream';
import type { Node as PMNode } from 'prosemirror-model';
import { zipStream, type ZipEntry } from '../files/zip';
import { extensionFor, isTextLike } from '../files/content-types';
import { docFromJSON, docToMarkdown } from '../model/doc/markdown';
import { withSuggestionsRejected } from '../model/doc/suggestions';
import { tablesDocumentName } from '../model/document-names';
import { readColumns } from '../model/table/document';
import { listFiles, listFolders } from '../persistence/files';
import type { FileRow, FolderRow, Surface } from '../persistence/schema';
import { listSurfaces } from '../persistence/workspaces';
import { readDoc } from './docs';
import { readHtmlSurface } from './html';
import type { ResolvedWorkspace } from './resolved-workspace';
import type { Services } from './services';
import { rowsCsv } from './table-csv';

/**
 * A workspace as a folder (docs/IMPORT-EXPORT.md): one Markdown file per
 * doc, an .html file per html page, images in a folder named like the
 * page beside it, a CSV per table surface with its columns in a sidecar
 * `.columns.json`, a folder per files surface, pages nested under the
 * page they belong to, and `trellis-workspace.json` saying what each path
 * is. Streamed as a zip: each entry is made when the archive reaches it.
 */

export const MANIFEST_NAME = 'trellis-workspace.json';
export const MANIFEST_FORMAT = 'trellis-workspace';

export type ManifestSurface = { path: string; kind: Surface['kind']; name: string; slug: string; parent: string | null };
export type Manifest = { format: typeof MANIFEST_FORMAT; version: 1; workspace: { name: string; mode: string; timeZone?: string }; surfaces: ManifestSurface[] };

/** A name made safe as one path segment on every file system: no separators, no reserved characters, not empty or dots. */
export function safeSegment(name: string, fallback: string): string {
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 120)
    .trim();
  return cleaned || fallback;
}

/** Each surface's stem (path without extension), nested under its parent's, unique case-insensitively within a folder. */
export function surfaceStems(surfaces: Surface[]): Map<string, string> {
  const byId = new Map(surfaces.map((s) => [s.id, s]));
  const stems = new Map<string, string>();
  const taken = new Set<string>([MANIFEST_NAME.toLowerCase()]);
  const stemOf = (surface: Surface, seen: Set<string>): string => {
    const known = stems.get(surface.id);
    if (known) return known;
    const parent = surface.parentId && !seen.has(surface.parentId) ? byId.get(surface.parentId) : undefined;
    const folder = parent ? stemOf(parent, new Set([...seen, surface.id])) : '';
    const base = safeSegment(surface.name, surface.slug);
    let stem = folder ? `${folder}/${base}` : base;
    for (let n = 2; taken.has(stem.toLowerCase()); n++) stem = folder ? `${folder}/${base} (${n})` : `${base} (${n})`;
    taken.add(stem.toLowerCase());
    stems.set(surface.id, stem);
    return stem;
  };
  for (const surface of surfaces) stemOf(surface, new Set([surface.id]));
  return stems;
}

const EXTENSIONS: Record<Surface['kind'], string> = { doc: '.md', html: '.html', table: '.csv', files: '' };

/** A link's path from one file to another, percent-encoded as Markdown wants it. */
function relativeLink(from: string, to: string): string {
  return path
    .relative(path.dirname(from), to)
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

const BLOB_PATH = /\/api\/blobs\/([A-Za-z0-9_.-]+)$/;

type Layout = { surfaces: Surface[]; pathOf: Map<string, string>; stemOf: Map<string, string>; resolved: ResolvedWorkspace; services: Services };

/** The surface a link points at, when it is an address of this workspace's web app (`…/{org}/{workspace}/{surface}`). */
function linkedSurface(layout: Layout, href: string): Surface | null {
  const { publicUrl } = layout.services.config;
  const rest = href.startsWith(publicUrl) ? href.slice(publicUrl.length) : href.startsWith('/') ? href : null;
  const match = rest ? /^\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)/.exec(rest) : null;
  if (!match) return null;
  const { workspace, orgSlug } = layout.resolved;
  if (match[1] !== orgSlug || (match[2] !== workspace.slug && match[2] !== workspace.id)) return null;
  const slug = decodeURIComponent(match[3]!);
  return layout.surfaces.find((s) => s.slug === slug || s.id === slug) ?? layout.surfaces.find((s) => s.formerSlugs.includes(slug)) ?? null;
}

/** A doc's Markdown with links to other surfaces made relative paths, and this server's images as files in the page's folder. */
function docForFolder(layout: Layout, surface: Surface, body: PMNode): { markdown: string; images: Array<{ name: string; key: string }> } {
  const file = layout.pathOf.get(surface.id)!;
  const imageFolder = layout.stemOf.get(surface.id)!;
  const images = new Map<string, string>();
  const rewrite = (node: Record<string, unknown>): Record<string, unknown> => {
    if (node.type === 'image') {
      const attrs = node.attrs as Record<string, unknown>;
      const key = BLOB_PATH.exec(String(attrs.src ?? ''))?.[1];
      if (!key) return node;
      if (!images.has(key)) images.set(key, `image-${images.size + 1}${path.extname(key) || '.png'}`);
      return { ...node, attrs: { ...attrs, src: relativeLink(file, `${imageFolder}/${images.get(key)}`) } };
    }
    const marks = (node.marks as Array<Record<string, unknown>> | undefined)?.map((mark) => {
      if (mark.type !== 'link') return mark;
      const attrs = mark.attrs as Record<string, unknown>;
      const target = linkedSurface(layout, String(attrs.href ?? ''));
      return target ? { ...mark, attrs: { ...attrs, href: relativeLink(file, layout.pathOf.get(target.id)!) } } : mark;
    });
    const content = node.content as Array<Record<string, unknown>> | undefined;
    return { ...node, ...(marks ? { marks } : {}), ...(content ? { content: content.map(rewrite) } : {}) };
  };
  const json = rewrite(body.toJSON() as Record<string, unknown>);
  return { markdown: docToMarkdown(docFromJSON(json)), images: [...images].map(([key, name]) => ({ key, name })) };
}

function textEntry(name: string, text: () => Promise<string> | string): ZipEntry {
  return { name, mtime: new Date(), compress: true, open: async () => Readable.from([Buffer.from(await text(), 'utf8')]) };
}

function blobEntry(services: Services, name: string, key: string, compress = false): ZipEntry {
  return {
    name,
    mtime: new Date(),
    compress,
    open: async () => {
      const blob = await services.blobs.get(key);
      if (!blob) return Readable.from([]);
      return blob.body as Readable;
    },
  };
}

function bufferEntry(name: string, bytes: Buffer): ZipEntry {
  return { name, size: bytes.length, mtime: new Date(), compress: true, open: async () => Readable.from([bytes]) };
}

/** One doc: its Markdown, then its images (the body is read when the archive is ready for it). */
async function docEntries(layout: Layout, surface: Surface): Promise<ZipEntry[]> {
  const { body } = await readDoc(layout.services, layout.resolved.workspace, { surfaceId: surface.id });
  const made = docForFolder(layout, surface, withSuggestionsRejected(body));
  const folder = layout.stemOf.get(surface.id)!;
  return [
    bufferEntry(layout.pathOf.get(surface.id)!, Buffer.from(made.markdown, 'utf8')),
    ...made.images.map((image) => blobEntry(layout.services, `${folder}/${image.name}`, image.key)),
  ];
}

/** An html page with this server's images as files beside it (and links to other surfaces made relative). */
async function htmlEntries(layout: Layout, surface: Surface): Promise<ZipEntry[]> {
  const name = layout.pathOf.get(surface.id)!;
  const folder = layout.stemOf.get(surface.id)!;
  const { html } = await readHtmlSurface(layout.services, layout.resolved.workspace, surface.id);
  const found = new Map<string, string>();
  const rewritten = html.replace(/(src|href)="([^"]*)"/g, (whole, attribute: string, value: string) => {
    const href = value.replace(/&amp;/g, '&');
    const key = attribute === 'src' ? BLOB_PATH.exec(href)?.[1] : undefined;
    if (key) {
      if (!found.has(key)) found.set(key, `image-${found.size + 1}${path.extname(key) || '.png'}`);
      return `src="${relativeLink(name, `${folder}/${found.get(key)}`)}"`;
    }
    const target = attribute === 'href' ? linkedSurface(layout, href) : null;
    return target ? `href="${relativeLink(name, layout.pathOf.get(target.id)!)}"` : whole;
  });
  return [bufferEntry(name, Buffer.from(rewritten, 'utf8')), ...[...found].map(([key, imageName]) => blobEntry(layout.services, `${folder}/${imageName}`, key))];
}

/** A sheet as the CSV the API writes (an `id` column, then the column keys) and its columns as JSON. */
function tableEntries(layout: Layout, surface: Surface): ZipEntry[] {
  const name = layout.pathOf.get(surface.id)!;
  const stem = layout.stemOf.get(surface.id)!;
  const { services, resolved } = layout;
  return [
    {
      name,
      mtime: new Date(),
      compress: true,
      open: async () => Readable.from((await rowsCsv(services, resolved.workspace, { surfaceId: surface.id })).chunks),
    },
    textEntry(`${stem}.columns.json`, async () => {
      const columns = await services.sync.read(tablesDocumentName(resolved.workspace.id), (doc) => readColumns(doc, surface.id));
      return `${JSON.stringify({ columns }, null, 2)}\n`;
    }),
  ];
}

/** A files surface as a folder: its folders and live files, by their names (made unique within each folder). */
async function filesEntries(layout: Layout, surface: Surface): Promise<ZipEntry[]> {
  const { services } = layout;
  const root = layout.stemOf.get(surface.id)!;
  const folders = await listFolders(services.db, { surfaceId: surface.id, parentFolderId: undefined, q: undefined, direction: 'asc', byCreation: false });
  const files: FileRow[] = await listFiles(services.db, {
    surfaceId: surface.id,
    parentFolderId: undefined,
    starredOnly: false,
    archived: false,
    q: undefined,
    sort: 'name',
    direction: undefined,
    limit: 1_000_000,
    offset: 0,
  });
  const folderPath = new Map<string, string>();
  const byId = new Map(folders.map((f) => [f.id, f]));
  const taken = new Set<string>();
  const unique = (wanted: string) => {
    const ext = path.extname(wanted);
    let candidate = wanted;
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${wanted.slice(0, wanted.length - ext.length)} (${n})${ext}`;
    taken.add(candidate.toLowerCase());
    return candidate;
  };
  const pathOfFolder = (folder: FolderRow, depth = 0): string => {
    const known = folderPath.get(folder.id);
    if (known) return known;
    const parent = folder.parentFolderId && depth < 64 ? byId.get(folder.parentFolderId) : undefined;
    const made = unique(`${parent ? pathOfFolder(parent, depth + 1) : root}/${safeSegment(folder.name, 'folder')}`);
    folderPath.set(folder.id, made);
    return made;
  };
  const entries: ZipEntry[] = folders.map((folder) => ({ name: `${pathOfFolder(folder)}/`, mtime: folder.updatedAt, compress: false, directory: true, open: async () => Readable.from([]) }));
  if (folders.length === 0) entries.push({ name: `${root}/`, mtime: new Date(), compress: false, directory: true, open: async () => Readable.from([]) });
  for (const file of files) {
    const folder = file.parentFolderId ? byId.get(file.parentFolderId) : undefined;
    const name = unique(`${folder ? pathOfFolder(folder) : root}/${safeSegment(file.name, `file${extensionFor(file.contentType) ? `.${extensionFor(file.contentType)}` : ''}`)}`);
    entries.push({ ...blobEntry(services, name, file.blobKey, isTextLike(file.contentType)), size: file.size, mtime: file.updatedAt });
  }
  return entries;
}

/**
 * The workspace as a zip, streamed. Files surfaces are included when the
 * caller may read files (members); a public reader's export has the pages
 * and tables only.
 */
export async function exportWorkspaceFolder(services: Services, resolved: ResolvedWorkspace, options: { withFiles: boolean }): Promise<{ filename: string; stream: Readable }> {
  const surfaces = (await listSurfaces(services.db, resolved.workspace.id)).filter((s) => options.withFiles || s.kind !== 'files');
  const stemOf = surfaceStems(surfaces);
  const pathOf = new Map(surfaces.map((s) => [s.id, `${stemOf.get(s.id)!}${EXTENSIONS[s.kind]}`]));
  const layout: Layout = { surfaces, pathOf, stemOf, resolved, services };
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: 1,
    // The zone its formulas read TODAY() and NOW() in (docs/FORMULAS.md "Time zone"), so that a copy computes the same cells.
    workspace: { name: resolved.workspace.name, mode: resolved.workspace.mode, timeZone: resolved.workspace.timeZone },
    surfaces: surfaces.map((s) => ({ path: pathOf.get(s.id)!, kind: s.kind, name: s.name, slug: s.slug, parent: s.parentId ? (pathOf.get(s.parentId) ?? null) : null })),
  };
  async function* entries(): AsyncGenerator<ZipEntry> {
    yield textEntry(MANIFEST_NAME, () => `${JSON.stringify(manifest, null, 2)}\n`);
    for (const surface of surfaces) {
      if (surface.kind === 'doc') yield* await docEntries(layout, surface);
      else if (surface.kind === 'html') yield* await htmlEntries(layout, surface);
      else if (surface.kind === 'table') yield* tableEntries(layout, surface);
      else yield* await filesEntries(layout, surface);
    }
  }
  return { filename: `${resolved.workspace.slug}.zip`, stream: zipStream(entries()) };
}
