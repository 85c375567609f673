import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { flushPath, syncTree } from '../lib/flush';
import { repositoryRoot } from '../lib/repository-root';
import { startMark } from '../lib/start-marks';
import { eachSideBySide } from '../lib/side-by-side';

/**
 * A migrated embedded database made once at build time
 * (scripts/build.ts writes dist/pglite-template), copied into a fresh
 * DATA_DIR at its first start. Creating a PGlite data directory runs
 * Postgres's initdb inside the process: seconds of CPU and ~600 MB resident
 * at its peak, most of which the process keeps afterwards (WebAssembly
 * memory and the heap it grew). A copy costs a fraction of a second and
 * nothing it keeps (docs/PERFORMANCE.md, "Footprint").
 *
 * The template stands for one PGlite build: its stamp names the PGlite
 * version that made it, and a server running another one creates its
 * directory itself, as without a template.
 */
/** Where a build puts it, found from this module wherever the bundle placed it (main.js or a shared chunk). */
export const BUILT_TEMPLATE = path.join(repositoryRoot(import.meta.dirname), 'dist/pglite-template');

/** Where embedded PGlite keeps its database under DATA_DIR. */
export const pgliteDirOf = (dataDir: string) => path.join(dataDir, 'pglite');

/**
 * At a compiled start on embedded PGlite: copies the template into
 * `DATA_DIR/pglite` when that holds no database yet, flushed as the durable
 * file layer flushes a new data directory (`syncTree`). src/main.ts starts it
 * before it loads the server's modules, so the copy's disk work (1,366 files,
 * ~0.7 s, mostly in the thread pool) runs beside their loading and compiling
 * on the main thread instead of after them; the database is opened only once
 * it is done (docs/PERFORMANCE.md, "h19-start"). Nothing is copied when
 * the directory holds a database, or anything at all, or the template is
 * not this PGlite's: opening the database then decides, as before.
 */
export async function seedDataDir(dataDir: string, template: string): Promise<void> {
  const dir = pgliteDirOf(dataDir);
  await fs.mkdir(dir, { recursive: true });
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  await copyTemplate(template, dir, syncTree);
}

export type TemplateStamp = { pglite: string; migrations: string[]; trimmed?: boolean };

/** The stamp of the template at `dir`, kept beside it (`<dir>.json`): Postgres keeps its own directory. */
export const stampFileOf = (dir: string) => `${dir}.json`;

/** The version of the PGlite package this process loads. */
export function installedPGliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  // The package's entry is dist/index.cjs; its package.json is beside dist/.
  const manifest = path.join(path.dirname(path.dirname(entry)), 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

export function readTemplateStamp(dir: string): TemplateStamp | null {
  try {
    if (!existsSync(path.join(dir, 'PG_VERSION'))) return null;
    return JSON.parse(readFileSync(stampFileOf(dir), 'utf8')) as TemplateStamp;
  } catch {
    return null;
  }
}

/**
 * Copies the template into the empty directory `target` when it was made by
 * this PGlite; false when there is none to use. `flush` (the storage's) makes
 * the copy durable before it is renamed into place; the rename is flushed
 * after.
 */
export async function copyTemplate(template: string, target: string, flush?: (dir: string) => Promise<void>): Promise<boolean> {
  if (readTemplateStamp(template)?.pglite !== installedPGliteVersion()) return false;
  if ((await fs.readdir(target)).length > 0) return false;
  // Copied beside it and renamed into place: a copy cut short is never taken for a database.
  const staging = `${target}.copying`;
  await fs.rm(staging, { recursive: true, force: true });
  await copyTree(template, staging);
  startMark('template files written');
  await flush?.(staging);
  startMark('template files flushed');
  await fs.rmdir(target);
  await fs.rename(staging, target);
  // The files are flushed already; the rename is an entry of the parent directory.
  if (flush) await flushPath(path.dirname(target), true);
  return true;
}

/** The directories made one by one (`to` may exist), the files copied several at once: `fs.cp` copies the template's 1,337 files one after another (0.8 s of a 3.5 s first start). */
export async function copyTree(from: string, to: string): Promise<void> {
  const files: [string, string][] = [];
  const walk = async (source: string, copy: string) => {
    await fs.mkdir(copy, { recursive: true });
    for (const entry of await fs.readdir(source, { withFileTypes: true })) {
      const [inner, innerCopy] = [path.join(source, entry.name), path.join(copy, entry.name)];
      if (entry.isDirectory()) await walk(inner, innerCopy);
      else if (entry.isFile()) files.push([inner, innerCopy]);
    }
  };
  await walk(from, to);
  await eachSideBySide(files, ([file, copy]) => fs.copyFile(file, copy));
}
