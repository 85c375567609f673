import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import yazl from 'yazl';

/**
 * A zip archive written as it is read: entries are opened one at a time,
 * when the archive reaches them, and their bytes flow through with
 * back-pressure, so memory stays flat whatever the total size. Entries
 * carry their size (sizes above 4 GiB switch to ZIP64 by themselves).
 */

export type ZipEntry = {
  name: string;
  size: number;
  mtime: Date;
  /** Deflate text; store what is already compressed (images, video, archives). */
  compress: boolean;
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

/** The archive as a stream. A failure to read an entry destroys the stream with that error. */
export function zipStream(entries: ZipEntry[]): Readable {
  const zip = new yazl.ZipFile();
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
  });
  for (const entry of entries) {
    zip.addReadStreamLazy(entry.name, { size: entry.size, mtime: entry.mtime, compress: entry.compress }, (callback) => {
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
  }
  zip.end();
  (zip.outputStream as Readable).on('error', fail).pipe(output);
  return output;
}
