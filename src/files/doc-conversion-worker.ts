import { serveWorkerTasks } from '../lib/worker-pool';
import { bodyOfState, bodyReplacement } from '../model/doc/body-state';
import { markdownToDoc } from '../model/doc/markdown';
import { docSchema } from '../model/doc/schema';
import { docReferences, withReferencesChanged, type ReferenceChanges } from '../model/doc/references';
import { withSuggestionsRejected } from '../model/doc/suggestions';
import { docToDocx } from './doc-docx';
import { docToHtmlPage } from './doc-html';
import { UnreadableFileError, type ParsedImport } from './doc-parsed';
import { docxToDoc, htmlToDoc } from './doc-import';
import { docToPdf } from './doc-pdf';
import type { LoadedImage } from './doc-runs';
import { sanitizeHtml } from './sanitize';

/**
 * The conversion worker's script (run by ./doc-conversions.ts's pool): the
 * file readers and writers, and a body turned between its Y state and
 * ProseMirror, off the serving thread. Docs cross as ProseMirror JSON text
 * or encoded Y state, files and images as bytes.
 */

type ImagesIn = Record<string, LoadedImage | null>;
type ExportIn = { format: 'docx' | 'pdf' | 'html'; state: Uint8Array; title: string; images: ImagesIn };
type ReadIn = { format: 'docx'; bytes: Uint8Array } | { format: 'html' | 'markdown'; text: string };

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function loadImageFrom(images: ImagesIn) {
  return async (src: string): Promise<LoadedImage | null> => {
    const image = images[src];
    return image ? { ...image, bytes: asBuffer(image.bytes) } : null;
  };
}

/** What the thread gathers before it sends a piece of the file: pdfkit writes a PDF in pieces of a few bytes, each message costs the serving thread an event. */
const STREAMED_CHUNK_BYTES = 64 * 1024;

async function streamOut(file: AsyncIterable<Buffer | string>, stream: (chunk: Uint8Array) => void) {
  let gathered: Buffer[] = [];
  let size = 0;
  for await (const chunk of file) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    gathered.push(bytes);
    size += bytes.length;
    if (size < STREAMED_CHUNK_BYTES) continue;
    stream(Buffer.concat(gathered, size));
    gathered = [];
    size = 0;
  }
  if (size > 0) stream(Buffer.concat(gathered, size));
  return { result: null };
}

async function readFile(input: ReadIn): Promise<ParsedImport & { images?: Awaited<ReturnType<typeof docxToDoc>>['images'] }> {
  if (input.format === 'docx') return docxToDoc(asBuffer(input.bytes));
  if (input.format === 'html') return htmlToDoc(input.text);
  return { doc: markdownToDoc(input.text), warnings: [] };
}

serveWorkerTasks({
  async readDocFile(input: ReadIn) {
    try {
      const parsed = await readFile(input);
      const images = await Promise.all([...(parsed.images ?? [])].map(async ([src, image]) => ({ src, contentType: image.contentType, bytes: new Uint8Array(await image.read()) })));
      const references = docReferences(parsed.doc);
      const result = { doc: JSON.stringify(parsed.doc), warnings: parsed.warnings, images, imageSources: references.images, links: references.links };
      return { result, transfer: images.map((image) => image.bytes.buffer) };
    } catch (error) {
      if (error instanceof UnreadableFileError) return { result: { unreadable: error.message } };
      throw error;
    }
  },
  async bodyUpdate(input: { state: Uint8Array; doc: string; changes: ReferenceChanges }) {
    const target = withReferencesChanged(docSchema.nodeFromJSON(JSON.parse(input.doc)), input.changes);
    const replacement = bodyReplacement(input.state, target);
    if (!replacement) return { result: { update: null, sectionParts: null } };
    // As text: cloning thousands of small arrays costs the receiving thread more than parsing their JSON.
    const result = { update: replacement.update, sectionParts: JSON.stringify(replacement.sectionParts) };
    return { result, transfer: [replacement.update.buffer as ArrayBuffer] };
  },
  async sanitizeHtml(input: { html: string }) {
    return { result: sanitizeHtml(input.html) };
  },
  async exportDoc(input: ExportIn, stream) {
    const body = withSuggestionsRejected(bodyOfState(input.state));
    const options = { title: input.title, loadImage: loadImageFrom(input.images) };
    if (input.format === 'docx') return streamOut(await docToDocx(body, options), stream);
    if (input.format === 'pdf') return streamOut(docToPdf(body, options) as unknown as AsyncIterable<Buffer>, stream);
    return streamOut(docToHtmlPage(body, input.title), stream);
  },
});
