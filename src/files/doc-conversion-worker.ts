import { Readable } from 'node:stream';
import { serveWorkerTasks } from '../lib/worker-pool';
import { docSchema } from '../model/doc/schema';
import { docToDocx } from './doc-docx';
import { UnreadableFileError } from './doc-parsed';
import { docxToDoc, htmlToDoc } from './doc-import';
import { docToPdf } from './doc-pdf';
import type { LoadedImage } from './doc-runs';

/**
 * The conversion worker's script (run by ./doc-conversions.ts's pool): the
 * Word, HTML and PDF converters, off the serving thread. Docs cross as
 * ProseMirror JSON text, files and images as bytes.
 */

type ImagesIn = Record<string, LoadedImage | null>;
type ExportIn = { doc: string; title: string; images: ImagesIn };

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function loadImageFrom(images: ImagesIn) {
  return async (src: string): Promise<LoadedImage | null> => {
    const image = images[src];
    return image ? { ...image, bytes: asBuffer(image.bytes) } : null;
  };
}

async function streamOut(file: AsyncIterable<Buffer | string>, stream: (chunk: Uint8Array) => void) {
  for await (const chunk of file) stream(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return { result: null };
}

serveWorkerTasks({
  async docxToDoc(input: { bytes: Uint8Array }) {
    try {
      const parsed = await docxToDoc(asBuffer(input.bytes));
      const images = await Promise.all([...parsed.images].map(async ([src, image]) => ({ src, contentType: image.contentType, bytes: new Uint8Array(await image.read()) })));
      return { result: { doc: JSON.stringify(parsed.doc), warnings: parsed.warnings, images }, transfer: images.map((image) => image.bytes.buffer) };
    } catch (error) {
      if (error instanceof UnreadableFileError) return { result: { unreadable: error.message } };
      throw error;
    }
  },
  async htmlToDoc(input: { html: string }) {
    const parsed = htmlToDoc(input.html);
    return { result: { doc: JSON.stringify(parsed.doc), warnings: parsed.warnings, images: [] } };
  },
  async docToDocx(input: ExportIn, stream) {
    const file = await docToDocx(docSchema.nodeFromJSON(JSON.parse(input.doc)), { title: input.title, loadImage: loadImageFrom(input.images) });
    return streamOut(file, stream);
  },
  async docToPdf(input: ExportIn, stream) {
    const file = docToPdf(docSchema.nodeFromJSON(JSON.parse(input.doc)), { title: input.title, loadImage: loadImageFrom(input.images) });
    return streamOut(file as unknown as AsyncIterable<Buffer>, stream);
  },
});
