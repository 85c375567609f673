import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import { WorkerPool, workerScript } from '../lib/worker-pool';
import type { ReferenceChanges } from '../model/doc/references';
import { UnreadableFileError, type DocxImages } from './doc-parsed';
import type { LoadedImage } from './doc-runs';

/**
 * The heavy conversions, run in worker threads (./doc-conversion-worker.ts):
 * mammoth's Word reader, the HTML sanitiser and parser, the Markdown
 * reader, the `docx` package's packer, the PDF layout and the HTML page,
 * and turning a large body between its Y document and ProseMirror, are
 * synchronous stretches of seconds for a large doc, which on the serving
 * thread would stall every other request. The pool runs at most
 * CONVERSION_THREADS of them at once in the process (the per-organisation
 * limit is src/domain/doc-io.ts's), the rest wait their turn.
 *
 * What crosses the thread boundary is plain data: a live document as its
 * encoded Y state, a body made from a file as ProseMirror JSON *text* (the
 * serving thread only holds it and hands it back: cloning a large doc's
 * object tree held this thread several times longer than its text), files
 * and images as bytes, and a body's replacement as the one Y update that
 * makes it.
 */

/** One thread per spare core, at least one and at most two: conversions share the machine with the server. */
export const CONVERSION_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

let pool: WorkerPool | null = null;

function conversions(): WorkerPool {
  pool ??= new WorkerPool(workerScript(import.meta.url, 'doc-conversion-worker'), CONVERSION_THREADS);
  return pool;
}

export type ReadableDocFile = { format: 'docx'; bytes: Buffer } | { format: 'html' | 'markdown'; text: string };

/**
 * A file read into a doc body, still in the conversion thread's terms: the
 * body as ProseMirror JSON text, what it could not hold, the Word file's
 * own images, and the images and links the body points at (for the
 * serving thread to store and map, then `bodyUpdateOffThread`).
 */
export type ReadDocFile = { doc: string; warnings: string[]; images: DocxImages; imageSources: string[]; links: string[] };

type ReadOut = { doc: string; warnings: string[]; images: Array<{ src: string; contentType: string; bytes: Uint8Array }>; imageSources: string[]; links: string[] } | { unreadable: string };

/** Reads a Word file, an HTML page or Markdown into a doc body in a worker; throws UnreadableFileError for bytes that are not what they say. */
export async function readDocFileOffThread(file: ReadableDocFile): Promise<ReadDocFile> {
  const input = file.format === 'docx' ? { format: file.format, bytes: new Uint8Array(file.bytes) } : file;
  const out = await conversions().run<ReadOut>('readDocFile', input, { transfer: 'bytes' in input ? [input.bytes.buffer] : [] });
  if ('unreadable' in out) throw new UnreadableFileError(out.unreadable);
  const images: DocxImages = new Map();
  for (const image of out.images) {
    const bytes = Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength);
    images.set(image.src, { contentType: image.contentType, read: async () => bytes });
  }
  return { doc: out.doc, warnings: out.warnings, images, imageSources: out.imageSources, links: out.links };
}

/**
 * The Y update that makes the body of a document whose encoded state is
 * `state` the doc `doc` (JSON text from `readDocFileOffThread`) with its
 * images and links changed as `changes` says, and the section parts of
 * the body it makes (JSON text: src/model/doc/body-sections.ts); null when
 * nothing changes. Made in a worker on a copy of the state
 * (src/model/doc/body-state.ts).
 */
export async function bodyUpdateOffThread(state: Uint8Array, doc: string, changes: ReferenceChanges): Promise<{ update: Uint8Array; sectionParts: string } | null> {
  const out = await conversions().run<{ update: Uint8Array | null; sectionParts: string | null }>('bodyUpdate', { state, doc, changes }, { transfer: [state.buffer as ArrayBuffer] });
  return out.update && out.sectionParts !== null ? { update: out.update, sectionParts: out.sectionParts } : null;
}

/** HTML sanitised as html surfaces are (./sanitize.ts `sanitizeHtml`), in a worker: the sanitiser builds a DOM of the whole page. */
export async function sanitizeHtmlOffThread(html: string): Promise<string> {
  return conversions().run<string>('sanitizeHtml', { html });
}

/**
 * A document's body (open suggestions rejected) as a Word file, a PDF or an
 * HTML page, read from its encoded Y state and written in a worker,
 * streamed as it is made. `images` are the ones the body shows, loaded on
 * the serving thread (they come from the blob store). The worker does not
 * wait for a slow reader (a 1 MB doc's file is a few MB); a reader that
 * goes away drops what is still coming.
 */
export function exportDocOffThread(format: 'docx' | 'pdf' | 'html', input: { state: Uint8Array; title: string; images: Record<string, LoadedImage | null> }): Readable {
  const file = new Readable({ read() {} });
  conversions()
    .run('exportDoc', { format, ...input }, {
      transfer: [input.state.buffer as ArrayBuffer],
      onChunk: (chunk) => {
        if (!file.destroyed) file.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      },
    })
    .then(
      () => file.destroyed || file.push(null),
      (error: Error) => file.destroy(error),
    );
  return file;
}
