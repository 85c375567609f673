import path from 'node:path/posix';
import type { Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { whenNeeded } from '../lib/when-needed';

/**
 * Reading an uploaded archive without trusting it: its table of contents
 * is checked whole before any entry is read, so a zip bomb (sizes past the
 * limits, or a ratio no real document has), a path that leaves the folder
 * (`../`, an absolute path, a drive letter) or too many entries refuse the
 * archive before anything is written. Entries are read one at a time, and
 * each is held to the size its header declares (yauzl checks the inflated
 * bytes against it), so a header that lies fails that entry alone.
 */

export const ARCHIVE_LIMITS = {
  entries: 20_000,
  totalBytes: 2 * 1024 ** 3,
  entryBytes: 100 * 1024 ** 2,
  /** Inflated size over stored size beyond which an entry larger than `ratioFloorBytes` is a bomb. */
  ratio: 200,
  ratioFloorBytes: 1024 * 1024,
};

export type ArchiveEntry = { path: string; size: number; entry: yauzl.Entry };
export type ArchiveProblem = { path: string; message: string };

export class ArchiveRefused extends Error {
  constructor(readonly problems: ArchiveProblem[]) {
    super(problems.map((p) => `${p.path || 'the archive'}: ${p.message}`).join('; '));
  }
}

export type OpenedArchive = {
  /** Files (not folders), in the archive's order, paths relative to its common top folder when it has one. */
  entries: ArchiveEntry[];
  /** The entry's bytes as they inflate, for a reader that takes them as a stream; an entry over `maxBytes` fails before any is read. */
  open(entry: ArchiveEntry, maxBytes?: number): Promise<Readable>;
  read(entry: ArchiveEntry, maxBytes?: number): Promise<Buffer>;
  close(): void;
};

function decodeName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer | string;
  if (typeof raw === 'string') return raw;
  // Bit 11: the name is UTF-8; otherwise it is CP437, whose ASCII part is all that sensible names use.
  return (entry.generalPurposeBitFlag & 0x800) !== 0 ? raw.toString('utf8') : raw.toString('latin1');
}

/** Why a name may not be unpacked, or null: it must stay inside the folder. */
function nameProblem(name: string): string | null {
  if (name.includes('\0')) return 'the name holds a NUL character';
  const slashed = name.replace(/\\/g, '/');
  if (slashed.startsWith('/') || /^[a-zA-Z]:/.test(slashed)) return 'an absolute path, outside the folder';
  if (slashed.split('/').includes('..')) return 'a path that leaves the folder (..)';
  return null;
}

/** Opens and checks an archive on disk; throws ArchiveRefused with every problem found, or for bytes that are not a zip. */
export async function openArchive(file: string): Promise<OpenedArchive> {
  let zip: yauzl.ZipFile;
  try {
    zip = await whenNeeded<typeof yauzl>('yauzl').openPromise(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: false, strictFileNames: false });
  } catch (error) {
    throw new ArchiveRefused([{ path: '', message: `not a zip archive that can be read (${(error as Error).message})` }]);
  }
  try {
    const problems: ArchiveProblem[] = [];
    const found: ArchiveEntry[] = [];
    let total = 0;
    let count = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        count += 1;
        if (count > ARCHIVE_LIMITS.entries) {
          problems.push({ path: '', message: `more than ${ARCHIVE_LIMITS.entries} entries` });
          break;
        }
        const name = decodeName(entry);
        const problem = nameProblem(name);
        if (problem) {
          problems.push({ path: name, message: problem });
          continue;
        }
        if (name.endsWith('/')) continue;
        total += entry.uncompressedSize;
        if (entry.uncompressedSize > ARCHIVE_LIMITS.entryBytes) problems.push({ path: name, message: `larger than ${ARCHIVE_LIMITS.entryBytes / 1024 ** 2} MB unpacked` });
        else if (entry.uncompressedSize > ARCHIVE_LIMITS.ratioFloorBytes && entry.uncompressedSize > ARCHIVE_LIMITS.ratio * Math.max(1, entry.compressedSize)) {
          problems.push({ path: name, message: `compressed ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} to 1, which no document is: a zip bomb` });
        }
        found.push({ path: name.replace(/\\/g, '/'), size: entry.uncompressedSize, entry });
      }
    } catch (error) {
      problems.push({ path: '', message: `its table of contents cannot be read (${(error as Error).message})` });
    }
    if (total > ARCHIVE_LIMITS.totalBytes) problems.push({ path: '', message: `more than ${ARCHIVE_LIMITS.totalBytes / 1024 ** 3} GB unpacked: a zip bomb or too large an archive` });
    if (problems.length > 0) throw new ArchiveRefused(problems);
    const entries = withoutCommonFolder(found.filter((e) => !isSystemJunk(e.path)));
    const open = async (entry: ArchiveEntry, maxBytes = ARCHIVE_LIMITS.entryBytes): Promise<Readable> => {
      if (entry.size > maxBytes) throw new Error(`larger than ${Math.round(maxBytes / 1024 ** 2)} MB`);
      return zip.openReadStreamPromise(entry.entry);
    };
    return {
      entries,
      open,
      read: async (entry, maxBytes) => {
        const chunks: Buffer[] = [];
        for await (const chunk of await open(entry, maxBytes)) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      },
      close: () => zip.close(),
    };
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** What archivers of some systems add beside the files (`__MACOSX/`, `.DS_Store`, `Thumbs.db`). */
function isSystemJunk(name: string): boolean {
  const base = path.basename(name);
  return name.startsWith('__MACOSX/') || base === '.DS_Store' || base === 'Thumbs.db' || base.startsWith('._');
}

/** An archive of one folder (`Export-1234/…`) reads as that folder's content. */
function withoutCommonFolder(entries: ArchiveEntry[]): ArchiveEntry[] {
  if (entries.length === 0) return entries;
  const first = entries[0]!.path.split('/')[0]!;
  if (!entries.every((e) => e.path.startsWith(`${first}/`))) return entries;
  return entries.map((e) => ({ ...e, path: e.path.slice(first.length + 1) }));
}
