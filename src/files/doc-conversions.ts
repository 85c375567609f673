import { availableParallelism } from 'node:os';
import { Readable } from 'node:stream';
import type { Node as PMNode } from 'prosemirror-model';
import { WorkerPool, workerScript } from '../lib/worker-pool';
import { docSchema } from '../model/doc/schema';
import { UnreadableFileError, type DocxImages, type ParsedImport } from './doc-parsed';
import type { LoadedImage } from './doc-runs';

/**
 * The heavy conversions, run in worker threads (./doc-conversion-worker.ts):
 * mammoth's Word reader, the HTML sanitiser and parser, the `docx` package's
 * packer and the PDF layout are synchronous stretches of seconds for a large
 * doc, which on the serving thread would stall every other request. The
 * pool runs at most CONVERSION_THREADS of them at once in the process
 * (the per-organisation limit is src/domain/doc-io.ts's), the rest wait
 * their turn.
 */

/** One thread per spare core, at least one and at most two: conversions share the machine with the server. */
export const CONVERSION_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

let pool: WorkerPool | null = null;

function conversions(): WorkerPool {
  pool ??= new WorkerPool(workerScript(import.meta.url, 'doc-conversion-worker'), CONVERSION_THREADS);
  return pool;
}

type ParsedOut = { doc: string; warnings: string[]; images: Array<{ src: string; contentType: string; bytes: Uint8Array }> } | { unreadable: string };

function parsedIn(out: ParsedOut): ParsedImport & { images: DocxImages } {
  if ('unreadable' in out) throw new UnreadableFileError(out.unreadable);
  const images: DocxImages = new Map();
  for (const image of out.images) {
    const bytes = Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength);
    images.set(image.src, { contentType: image.contentType, read: async () => bytes });
  }
  return { doc: docSchema.nodeFromJSON(JSON.parse(out.doc)), warnings: out.warnings, images };
}

/** A Word file as a doc (./doc-import.ts `docxToDoc`), read in a worker; throws UnreadableFileError for bytes that are not one. */
export async function docxToDocOffThread(bytes: Buffer): Promise<ParsedImport & { images: DocxImages }> {
  const copy = new Uint8Array(bytes);
  return parsedIn(await conversions().run<ParsedOut>('docxToDoc', { bytes: copy }, { transfer: [copy.buffer] }));
}

/** An HTML page as a doc (./doc-import.ts `htmlToDoc`), read in a worker. */
export async function htmlToDocOffThread(html: string): Promise<ParsedImport & { images: DocxImages }> {
  return parsedIn(await conversions().run<ParsedOut>('htmlToDoc', { html }));
}

/** Every image the doc shows, loaded once on this thread (they come from the blob store), for the worker. */
async function imagesOf(doc: PMNode, loadImage: (src: string) => Promise<LoadedImage | null>): Promise<Record<string, LoadedImage | null>> {
  const srcs = new Set<string>();
  doc.descendants((node) => {
    if (node.type.name === 'image' && node.attrs.src) srcs.add(String(node.attrs.src));
  });
  const images: Record<string, LoadedImage | null> = {};
  for (const src of srcs) images[src] = await loadImage(src);
  return images;
}

// Docs cross the thread boundary as JSON text: cloning a large doc's object tree holds this thread several times longer.

/**
 * The doc as a Word file or a PDF, written in a worker and streamed as it
 * is made. The worker does not wait for a slow reader (a 1 MB doc's file
 * is a few MB); a reader that goes away drops what is still coming.
 */
export async function writeDocOffThread(
  format: 'docx' | 'pdf',
  doc: PMNode,
  options: { title: string; loadImage: (src: string) => Promise<LoadedImage | null> },
): Promise<Readable> {
  const images = await imagesOf(doc, options.loadImage);
  const file = new Readable({ read() {} });
  conversions()
    .run(format === 'pdf' ? 'docToPdf' : 'docToDocx', { doc: JSON.stringify(doc), title: options.title, images }, {
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
