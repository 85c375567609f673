import { rm } from 'node:fs/promises';
import path from 'node:path/posix';
import { ApiError, errors } from '../errors';
import { openArchive, ArchiveRefused, type ArchiveEntry, type OpenedArchive } from '../files/zip-read';
import { typeOfName } from '../files/content-types';
import { CONVERSION_TURN_MS } from '../files/doc-runs';
import { readDocFileOffThread, sanitizeHtmlOffThread } from '../files/doc-conversions';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { replaceHtml } from '../model/html';
import { surfaceDocumentName, tablesDocumentName } from '../model/document-names';
import { firstFreeSlug, slugFromName } from '../model/surface-slugs';
import { ensureSheet } from '../model/table/document';
import { canonicalTimeZone } from '../model/table/settings';
import type { ColumnDef } from '../model/table/types';
import type { Actor } from '../policy/actor';
import type { Surface, SurfaceKind } from '../persistence/schema';
import { listSurfaces, liveSlugTaken } from '../persistence/workspaces';
import { callerOrigin } from '../sync/origins';
import { forgetImages, storeImportedImages, writeBodyOffThread } from './doc-io';
import { storeDocImage } from './doc-images';
import { createFolder } from './file-folders';
import { proxyUpload } from './file-uploads';
import { JobReporter, startJob } from './jobs';
import type { ResolvedWorkspace, WorkspaceResolver } from './resolved-workspace';
import type { Services } from './services';
import { addSurface } from './surfaces';
import { importRowsCsv } from './table-csv';
import { putColumns } from './tables';
import { documentContent } from './workspace-documents';
import { archiveWorkspace, authorizeCreation, changeWorkspaceSettings, createWorkspaceFor } from './workspaces';
import { MANIFEST_FORMAT, MANIFEST_NAME, type Manifest } from './workspace-folder';

/**
 * A workspace from a folder (docs/IMPORT-EXPORT.md): a zip this server
 * exported (its `trellis-workspace.json` says what each path is) or a
 * Notion "Markdown & CSV" export (pages as .md, nested in folders named
 * like their parent page, databases as .csv, images beside), into a new
 * workspace, as a background job. The archive's table of contents is
 * checked whole first (./files/zip-read.ts): a zip bomb or a path leaving
 * the folder refuses it before anything is made. Then the workspace and
 * its surfaces are made at once, and each entry goes in on its own: a bad
 * entry is reported by its path and the rest goes in. Should the job fail
 * past that point, the new workspace is archived: nothing is left half
 * made where anyone would work in it.
 */

type Item = {
  path: string;
  kind: SurfaceKind;
  name: string;
  slug?: string;
  parent: string | null;
  /** For a table: the sidecar with its columns. */
  columns?: ArchiveEntry;
  entry?: ArchiveEntry;
};

type Plan = { workspaceName: string | null; timeZone: string | null; mode: 'doc' | 'table'; items: Item[]; files: ArchiveEntry[] };

const NOTION_ID = /\s+[0-9a-f]{32}$/i;
const PAGE_EXT = new Set(['.md', '.markdown']);
const HTML_EXT = new Set(['.html', '.htm']);
const IMAGE_EXT = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.svg', '.bmp', '.avif', '.tif', '.tiff', '.heic']);
/** The most a page, a page of HTML or a table's CSV may hold (the upload limit of doc and CSV imports). */
const TEXT_ENTRY_BYTES = 25 * 1024 * 1024;

function stemOf(entryPath: string): string {
  return entryPath.slice(0, entryPath.length - path.extname(entryPath).length);
}

/** A Notion name without its id (`Tasks 1a2b…` → `Tasks`); Notion's full-table CSV is `… _all.csv`. */
function displayName(entryPath: string): string {
  return path.basename(stemOf(entryPath)).replace(/_all$/, '').replace(NOTION_ID, '').trim() || path.basename(entryPath);
}

async function readManifest(archive: OpenedArchive): Promise<Manifest | null> {
  const entry = archive.entries.find((e) => e.path === MANIFEST_NAME);
  if (!entry) return null;
  try {
    const manifest = JSON.parse((await archive.read(entry, 10 * 1024 * 1024)).toString('utf8')) as Manifest;
    return manifest?.format === MANIFEST_FORMAT && Array.isArray(manifest.surfaces) ? manifest : null;
  } catch {
    return null;
  }
}

/** What becomes what: from the manifest when there is one, else by extension and folder (a Notion export). */
function planFrom(archive: OpenedArchive, manifest: Manifest | null): Plan {
  const byPath = new Map(archive.entries.map((e) => [e.path, e]));
  const consumed = new Set<string>([MANIFEST_NAME]);
  const items: Item[] = [];
  if (manifest) {
    for (const s of manifest.surfaces) {
      if (!['doc', 'html', 'table', 'files'].includes(s.kind) || typeof s.path !== 'string') continue;
      const item: Item = { path: s.path, kind: s.kind, name: String(s.name ?? displayName(s.path)).slice(0, 200) || 'Untitled', slug: s.slug, parent: s.parent ?? null };
      if (s.kind !== 'files') {
        item.entry = byPath.get(s.path);
        consumed.add(s.path);
      }
      if (s.kind === 'table') {
        item.columns = byPath.get(`${stemOf(s.path)}.columns.json`);
        consumed.add(`${stemOf(s.path)}.columns.json`);
      }
      items.push(item);
    }
  } else {
    const csvs = archive.entries.filter((e) => path.extname(e.path).toLowerCase() === '.csv');
    const hasAll = new Set(csvs.filter((e) => /_all\.csv$/i.test(e.path)).map((e) => e.path.replace(/_all\.csv$/i, '.csv')));
    for (const entry of archive.entries) {
      const ext = path.extname(entry.path).toLowerCase();
      const kind: SurfaceKind | null = PAGE_EXT.has(ext) ? 'doc' : HTML_EXT.has(ext) ? 'html' : ext === '.csv' ? 'table' : null;
      if (!kind) continue;
      consumed.add(entry.path);
      // Notion writes a database twice: the view as `X.csv` and every row as `X_all.csv`; the second is the table.
      if (kind === 'table' && hasAll.has(entry.path)) continue;
      items.push({ path: entry.path, kind, name: displayName(entry.path), parent: null, entry });
    }
    // A page or table nests under the page or table whose name its folder has (Notion's `Parent abc/Child def.md`).
    const byStem = new Map(items.map((i) => [stemOf(i.path).replace(/_all$/i, ''), i.path]));
    for (const item of items) item.parent = byStem.get(path.dirname(item.path)) ?? null;
  }
  const files = archive.entries.filter((e) => !consumed.has(e.path));
  const mode = manifest?.workspace?.mode === 'table' ? 'table' : 'doc';
  // A Notion export of one page and what is under it is named after that page.
  const roots = items.filter((i) => !i.parent);
  const workspaceName = manifest?.workspace?.name ?? (roots.length === 1 ? roots[0]!.name : null);
  const timeZone = typeof manifest?.workspace?.timeZone === 'string' ? manifest.workspace.timeZone : null;
  return { workspaceName, timeZone, mode, items, files };
}

/** Items in an order where each comes after its parent, kept otherwise as listed. */
function parentsFirst(items: Item[]): Item[] {
  const byPath = new Map(items.map((i) => [i.path, i]));
  const placed = new Set<string>();
  const ordered: Item[] = [];
  const place = (item: Item, depth: number) => {
    if (placed.has(item.path)) return;
    const parent = item.parent ? byPath.get(item.parent) : undefined;
    if (parent && depth < 64) place(parent, depth + 1);
    placed.add(item.path);
    ordered.push(item);
  };
  for (const item of items) place(item, 0);
  return ordered;
}

export type WorkspaceImportRequest = { archivePath: string; name?: string; slug: string; archiveName: string };

/**
 * Starts an import: checks the caller may create workspaces, records the
 * job (429 past the organisation's running jobs) and runs it in the
 * background; the archive file is deleted when the job ends. Answers the
 * job's id at once.
 */
export async function startWorkspaceImport(services: Services, actor: Actor, resolve: WorkspaceResolver, request: WorkspaceImportRequest): Promise<string> {
  const orgId = await authorizeCreation(services, actor);
  // Checked again when the workspace is made; asked here so that the usual mistake is a 409 and not a failed job.
  if (await liveSlugTaken(services.db, orgId, request.slug)) throw errors.conflict(`A workspace with the slug "${request.slug}" already exists in this organisation.`);
  const jobId = await startJob(services, actor, orgId, 'workspace_import');
  const reporter = new JobReporter(services, jobId);
  void runImport(services, actor, resolve, request, reporter)
    .catch(async (error: unknown) => {
      services.log.error({ err: error, jobId }, 'workspace import failed');
      reporter.errors.push({ path: '', message: error instanceof ApiError ? error.message : 'The import failed; nothing of it was kept.' });
      await reporter.finish('failed').catch(() => {});
    })
    .finally(() => rm(request.archivePath, { force: true }));
  return jobId;
}

/** Surfaces made for the items (in the order given) and the job's count of steps. */
async function makeWorkspace(services: Services, actor: Actor, request: WorkspaceImportRequest, plan: Plan, items: Item[]): Promise<{ workspaceId: string }> {
  const taken = new Set<string>();
  const indexOf = new Map(items.map((item, index) => [item.path, index]));
  const surfaces = items.map((item) => {
    const wanted = item.slug && /^[a-z0-9][a-z0-9-]{0,59}$/.test(item.slug) && !taken.has(item.slug) ? item.slug : firstFreeSlug(slugFromName(item.name, item.kind), taken);
    taken.add(wanted);
    return { slug: wanted, kind: item.kind, name: item.name, parent: item.parent ? (indexOf.get(item.parent) ?? null) : null };
  });
  const name = (request.name?.trim() || plan.workspaceName || displayName(request.archiveName) || 'Imported workspace').slice(0, 200);
  const content = documentContent(services);
  // Tables get their sheets, without the default columns a new workspace's table has: the CSV says what they are.
  const bare = {
    ...content,
    seedWorkspace: async (workspace: { id: string }, made: Array<{ id: string; kind: SurfaceKind }>) => {
      const sheets = made.filter((s) => s.kind === 'table');
      if (sheets.length === 0) return;
      await services.sync.transact(tablesDocumentName(workspace.id), callerOrigin(actor), (doc) => {
        for (const sheet of sheets) ensureSheet(doc, sheet.id, null);
      });
    },
  };
  const workspaceId = await createWorkspaceFor(services, actor, { name, slug: request.slug, mode: plan.mode, surfaces: surfaces.length ? surfaces : undefined }, bare);
  return { workspaceId };
}

async function runImport(services: Services, actor: Actor, resolve: WorkspaceResolver, request: WorkspaceImportRequest, reporter: JobReporter): Promise<void> {
  let archive: OpenedArchive;
  try {
    archive = await openArchive(request.archivePath);
  } catch (error) {
    if (!(error instanceof ArchiveRefused)) throw error;
    reporter.errors.push(...error.problems);
    await reporter.finish('failed');
    return;
  }
  let resolved: ResolvedWorkspace | null = null;
  try {
    const plan = planFrom(archive, await readManifest(archive));
    const items = parentsFirst(plan.items);
    const total = items.length + plan.files.length;
    await reporter.progress(0, total);
    const { workspaceId } = await makeWorkspace(services, actor, request, plan, items);
    resolved = await resolve(actor, { slug: workspaceId }, 'read');
    if (plan.timeZone) await carryTimeZone(services, actor, resolved, plan.timeZone, reporter);
    await reporter.progress(0, total, workspaceId);
    const surfaces = await listSurfaces(services.db, workspaceId);
    const surfaceOf = new Map(items.map((item, i) => [item.path, surfaces.find((s) => s.position === i)!]));
    const importer = new Importer(services, actor, resolved, archive, surfaceOf, reporter, total);
    await importer.run(items, plan.files);
    await reporter.finish('done', workspaceId);
  } catch (error) {
    if (resolved) await archiveWorkspace(services, actor, resolved).catch(() => {});
    throw error;
  } finally {
    archive.close();
  }
}

/** The exported workspace's time zone, which its formulas read TODAY() and NOW() in; a name this server does not know is reported, and UTC kept. */
async function carryTimeZone(services: Services, actor: Actor, resolved: ResolvedWorkspace, timeZone: string, reporter: JobReporter) {
  if (canonicalTimeZone(timeZone) === null) {
    reporter.errors.push({ path: MANIFEST_NAME, message: `"${timeZone.slice(0, 100)}" is not a time zone this server knows: the workspace reads dates in UTC` });
    return;
  }
  await changeWorkspaceSettings(services, actor, resolved, { timeZone }, documentContent(services));
}

class Importer {
  private done = 0;
  private readonly turns = new EventLoopTurns(CONVERSION_TURN_MS);
  private filesSurface: Surface | null = null;
  private readonly folders = new Map<string, string>();
  /** Archive paths of the files put in a files surface, with their addresses (links to them are rewritten). */
  private readonly fileUrls = new Map<string, string>();
  private readonly usedImages = new Set<string>();
  private readonly storedKeys: string[] = [];

  constructor(
    private readonly services: Services,
    private readonly actor: Actor,
    private readonly resolved: ResolvedWorkspace,
    private readonly archive: OpenedArchive,
    private readonly surfaceOf: Map<string, Surface>,
    private readonly reporter: JobReporter,
    private readonly total: number,
  ) {}

  async run(items: Item[], files: ArchiveEntry[]) {
    const fileItems = items.filter((i) => i.kind === 'files');
    const ownerOf = (entry: ArchiveEntry) => fileItems.find((f) => entry.path.startsWith(`${f.path.replace(/\/$/, '')}/`));
    const looseImage = (entry: ArchiveEntry) => !ownerOf(entry) && IMAGE_EXT.has(path.extname(entry.path).toLowerCase());
    // Files first (links to them are rewritten), then tables, then pages; an image beside the pages that no page showed goes to the files last.
    for (const entry of files.filter((e) => !looseImage(e))) await this.step(entry.path, () => this.putFile(entry, ownerOf(entry)));
    for (const item of items.filter((i) => i.kind === 'table')) await this.step(item.path, () => this.table(item, items));
    for (const item of items.filter((i) => i.kind === 'doc' || i.kind === 'html')) await this.step(item.path, () => this.page(item));
    for (const entry of files.filter(looseImage)) await this.step(entry.path, () => (this.usedImages.has(entry.path) ? Promise.resolve() : this.putFile(entry, undefined)));
    for (const item of fileItems) await this.step(item.path, async () => {});
  }

  private async step(entryPath: string, work: () => Promise<void>) {
    try {
      await work();
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'storage_quota' || error.statusCode === 402)) throw error;
      this.reporter.errors.push({ path: entryPath, message: error instanceof Error ? error.message : String(error) });
    }
    this.done += 1;
    await this.reporter.progress(this.done, this.total);
    await this.turns.yieldIfLong();
  }

  private surface(item: Item): Surface {
    return this.surfaceOf.get(item.path)!;
  }

  private async text(item: Item): Promise<string> {
    if (!item.entry) throw new Error('listed in the manifest, but not in the archive');
    const bytes = await this.archive.read(item.entry, TEXT_ENTRY_BYTES);
    const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
    if (bytes.includes(0)) throw new Error('not UTF-8 text');
    return text;
  }

  /** An address in this workspace for a relative link of the page at `from`, or null. */
  private linkTarget(from: string, href: string): string | null {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/') || href.startsWith('#')) return null;
    let target: string;
    try {
      target = path.normalize(path.join(path.dirname(from), decodeURIComponent(href.split(/[?#]/)[0]!)));
    } catch {
      return null;
    }
    const surface = this.surfaceOf.get(target) ?? this.surfaceOf.get(target.replace(/\.csv$/i, '_all.csv'));
    if (surface) return `${this.services.config.publicUrl}/${this.resolved.orgSlug}/${this.resolved.workspace.slug}/${surface.slug}`;
    return this.fileUrls.get(target) ?? null;
  }

  private async page(item: Item) {
    const surface = this.surface(item);
    const text = await this.text(item);
    const document = surfaceDocumentName(this.resolved.workspace.id, surface)!;
    const origin = callerOrigin(this.actor, 'rest');
    const archiveImage = async (src: string) => {
      let target: string;
      try {
        target = path.normalize(path.join(path.dirname(item.path), decodeURIComponent(src)));
      } catch {
        return null;
      }
      const entry = this.archive.entries.find((e) => e.path === target);
      if (!entry) return null;
      this.usedImages.add(entry.path);
      return { bytes: await this.archive.read(entry), contentType: typeOfName(entry.path) };
    };
    if (item.kind === 'html') {
      const html = await this.htmlWithImages(item, text, archiveImage);
      const safe = await sanitizeHtmlOffThread(html);
      await this.services.sync.transact(document, origin, (doc) => replaceHtml(doc, safe, origin));
      return;
    }
    // Read and written in a conversion thread: this thread maps the page's links and stores its images.
    const parsed = await readDocFileOffThread({ format: 'markdown', text });
    const links: Record<string, string> = {};
    for (const href of parsed.links) {
      const target = this.linkTarget(item.path, href);
      if (target) links[href] = target;
    }
    const stored = await storeImportedImages(this.services, this.resolved.workspace.orgId, parsed.imageSources, { paths: archiveImage });
    this.storedKeys.push(...stored.storedKeys);
    try {
      await writeBodyOffThread(this.services, document, origin, parsed.doc, { images: stored.images, links });
    } catch (error) {
      await forgetImages(this.services, stored.storedKeys);
      throw error;
    }
    for (const warning of stored.warnings) this.reporter.errors.push({ path: item.path, message: warning });
  }

  /** An html page's images from the archive stored as doc images, its links to other pages rewritten. */
  private async htmlWithImages(item: Item, html: string, image: (src: string) => Promise<{ bytes: Buffer; contentType: string } | null>): Promise<string> {
    const replacements = new Map<string, string>();
    for (const match of html.matchAll(/src="([^"]+)"/g)) {
      const src = match[1]!.replace(/&amp;/g, '&');
      if (/^[a-z][a-z0-9+.-]*:/i.test(src) || replacements.has(src)) continue;
      const found = await image(src);
      if (!found) continue;
      const stored = await storeDocImage(this.services, this.resolved.workspace.orgId, { bytes: found.bytes, mimetype: found.contentType });
      this.storedKeys.push(stored.key);
      replacements.set(src, stored.url);
    }
    return html.replace(/(src|href)="([^"]+)"/g, (whole, attribute: string, value: string) => {
      const raw = value.replace(/&amp;/g, '&');
      if (attribute === 'src') return replacements.has(raw) ? `src="${replacements.get(raw)}"` : whole;
      const target = this.linkTarget(item.path, raw);
      return target ? `href="${target}"` : whole;
    });
  }

  private async table(item: Item, items: Item[]) {
    const surface = this.surface(item);
    if (item.columns) {
      const { columns } = JSON.parse((await this.archive.read(item.columns, 10 * 1024 * 1024)).toString('utf8')) as { columns: ColumnDef[] };
      const slugOfTable = new Map(items.filter((i) => i.kind === 'table').map((i) => [i.slug, this.surface(i).slug]));
      const replacement = columns
        .filter((c) => c && typeof c.key === 'string')
        .map((column, position) => {
          const { id: _id, ...rest } = column as ColumnDef & { id?: string };
          const targetSurface = (rest as { targetSurface?: string }).targetSurface;
          return { ...rest, position, ...(targetSurface ? { targetSurface: slugOfTable.get(targetSurface) ?? targetSurface } : {}) };
        });
      await putColumns(this.services, this.actor, this.resolved, { surfaceId: surface.id }, replacement as never);
    }
    const entry = item.entry;
    if (!entry) throw new Error('listed in the manifest, but not in the archive');
    if (entry.size === 0) return;
    // Read as it inflates, like an uploaded CSV: the import keeps its own copy on disk, never the whole file in memory.
    const report = await importRowsCsv(this.services, this.actor, this.resolved, { surfaceId: surface.id, partial: true, open: () => this.archive.open(entry, TEXT_ENTRY_BYTES) });
    for (const error of report.errors) this.reporter.errors.push({ path: item.path, message: `line ${error.line}: ${error.message}` });
  }

  private async putFile(entry: ArchiveEntry, owner: Item | undefined) {
    const surface = owner ? this.surface(owner) : await this.defaultFilesSurface();
    const within = owner ? entry.path.slice(owner.path.replace(/\/$/, '').length + 1) : entry.path;
    const folderId = await this.folderFor(surface, path.dirname(within));
    const bytes = await this.archive.read(entry, 25 * 1024 * 1024);
    const file = await proxyUpload(this.services, this.actor, this.resolved, {
      surfaceSlug: surface.slug,
      parentFolderId: folderId,
      file: { bytes, filename: path.basename(within), mimetype: undefined },
    });
    this.fileUrls.set(entry.path, `${this.services.config.publicUrl}/api/workspaces/${file.workspaceId}/files/${file.id}/content`);
  }

  /** The files surface for files that belong to no page: made when the first such file comes. */
  private async defaultFilesSurface(): Promise<Surface> {
    this.filesSurface ??= await addSurface(this.services, this.actor, this.resolved, { kind: 'files', name: 'Files' });
    return this.filesSurface;
  }

  private async folderFor(surface: Surface, folder: string): Promise<string | null> {
    if (folder === '.' || folder === '') return null;
    const key = `${surface.id}:${folder}`;
    const known = this.folders.get(key);
    if (known) return known;
    const parentId = await this.folderFor(surface, path.dirname(folder));
    const made = await createFolder(this.services, this.actor, this.resolved, { surfaceSlug: surface.slug, parentFolderId: parentId, name: displayName(`${path.basename(folder)}.x`) });
    this.folders.set(key, made.id);
    return made.id;
  }
}
