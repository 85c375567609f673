import { DOMSerializer, type Node as PMNode } from 'prosemirror-model';
import { docSchema } from '../model/doc/schema';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { CONVERSION_TURN_MS } from './doc-runs';
import { whenNeeded } from '../lib/when-needed';

/**
 * A doc as a standalone HTML page: the schema's own `toDOM` for every
 * node (the markup the editor itself renders, which an HTML import reads
 * back), a little CSS for reading and printing, block by block so a long
 * doc streams (written in a conversion thread: ./doc-conversions.ts).
 */

const PAGE_STYLE = [
  'body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans",sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.55;color:#1a1a1a}',
  'table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.3rem .5rem;vertical-align:top}',
  'pre{background:#f4f4f4;padding:.6rem;overflow:auto}code{font-family:ui-monospace,Menlo,Consolas,monospace}',
  'blockquote{border-left:3px solid #ccc;margin-left:0;padding-left:1rem;color:#555}img{max-width:100%}',
  'ul[data-type=taskList]{list-style:none;padding-left:1.2rem}li[data-checked=true]::before{content:"☑ "}li[data-checked=false]::before{content:"☐ "}',
].join('');

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

let tools: { document: Document; serializer: DOMSerializer } | null = null;

function serializerTools() {
  tools ??= { document: new (whenNeeded<typeof import('jsdom')>('jsdom').JSDOM)('').window.document, serializer: DOMSerializer.fromSchema(docSchema) };
  return tools;
}

/** One block as HTML. */
export function blockToHtml(node: PMNode): string {
  const { document, serializer } = serializerTools();
  const holder = document.createElement('div');
  holder.appendChild(serializer.serializeNode(node, { document }));
  return holder.innerHTML;
}

/** The page, in pieces: the head, then a piece per top-level block, then the end. */
export async function* docToHtmlPage(doc: PMNode, title: string): AsyncGenerator<string> {
  const turns = new EventLoopTurns(CONVERSION_TURN_MS);
  yield `<!doctype html>\n<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head>\n<body>\n`;
  let batch = '';
  for (let i = 0; i < doc.childCount; i++) {
    batch += `${blockToHtml(doc.child(i))}\n`;
    if (batch.length > 64 * 1024) {
      yield batch;
      batch = '';
    }
    await turns.yieldIfLong();
  }
  yield `${batch}</body></html>\n`;
}
