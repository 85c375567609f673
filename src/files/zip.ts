import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type yazl from 'yazl';
import { whenNeeded } from '../lib/when-needed';

/**
 * A zip archive written as it is read: entries are opened one at a time,
 * when the archive reaches them, and their bytes flow through with
 * back-pressure, so memory stays flat whatever the total size. Entries
 * carry their size (sizes above 4 GiB switch to ZIP64 by themselves).
 */

export type ZipEntry = {
  name: string;
  /** Known in advance for stored files (it decides ZIP64); made entries leave it out. */
  size?: number;
  mtime: Date;
  /** Deflate text; store what is already compressed (images, video, archives). */
  compress: boolean;
  /** An empty folder (`name` ends with `/`); `open` is not called. */
  directory?: boolean;
  open(): Promise<Readable>;
};

/**
 * Entry names unique within the archive, case-insensitively (archives are
 * unpacked on case-insensitive file systems too): the second `report.pdf`
 * becomes `report (2).pdf`, the third `report (3).pdf`.
 */
export function uniqueEntryNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const ext = path.extname(name);
    const stem = name.slice(0, name.length - ext.length);
    let candidate = name;
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext}`;
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}

/** Entries added to the archive but not yet reached by it, at most: a source that makes entries as it goes waits beyond this. */
const QUEUED_ENTRIES = 8;

/**
 * The archive as a stream, its entries taken from `entries` (an array, or
 * an iterable that makes them as it goes: it is pulled only while fewer
 * than a few added entries wait for the archive to reach them). A failure
 * to read or make an entry destroys the stream with that error.
 */
export function zipStream(entries: Iterable<ZipEntry> | AsyncIterable<ZipEntry>): Readable {
  const zip = new (whenNeeded<typeof yazl>('yazl').ZipFile)();
  const output = new PassThrough();
  const open = new Set<Readable>();
  const fail = (error: Error) => {
    for (const source of open) source.destroy();
    output.destroy(error);
  };
  zip.on('error', fail);
  // A client that goes away stops the archive: nothing more is read from the store.
  output.on('close', () => {
    for (const source of open) source.destroy();
    wake?.();
  });
  let queued = 0;
  let wake: (() => void) | null = null;
  const reached = () => {
    queued -= 1;
    wake?.();
  };
  const add = (entry: ZipEntry) => {
    if (entry.directory) {
      zip.addEmptyDirectory(entry.name, { mtime: entry.mtime });
      return;
    }
    queued += 1;
    zip.addReadStreamLazy(entry.name, { ...(entry.size !== undefined ? { size: entry.size } : {}), mtime: entry.mtime, compress: entry.compress }, (callback) => {
      reached();
      if (output.destroyed) return;
      entry.open().then(
        (source) => {
          open.add(source);
          source.once('error', fail);
          source.once('close', () => open.delete(source));
          callback(null, source);
        },
        (error: Error) => fail(error),
      );
    });
  };
  (zip.outputStream as Readable).on('error', fail).pipe(output);
  void (async () => {
    for await (const entry of entries) {
      while (queued >= QUEUED_ENTRIES && !output.destroyed) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      if (output.destroyed) return;
      add(entry);
    }
    zip.end();
  })().catch((error: Error) => fail(error));
  return output;
}
