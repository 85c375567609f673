import type { Node as PMNode } from 'prosemirror-model';
import PDFDocument from 'pdfkit';
import { fontBytes, fontFile, fontRuns, type FontStyle } from './doc-fonts';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { CONVERSION_TURN_MS, inlineRuns, type InlineRun, type LoadedImage } from './doc-runs';

/**
 * A doc as a PDF (pdfkit): real text, selectable and searchable, set in
 * the embedded Noto fonts (./doc-fonts.ts) so Cyrillic, Greek and CJK
 * show; headings, lists, quotes, code, tables, images and a page number
 * at the foot of every page. Written block by block into the stream as
 * the reader takes it: pages leave as they are finished, the writer waits
 * while more than a few megabytes are unread, and it gives the event loop
 * back between blocks.
 */

const MARGIN = { top: 56, bottom: 64, left: 60, right: 60 };
const BODY_SIZE = 11;
const HEADING_SIZES = [22, 18, 15, 13, 12, 11];
const CODE_SIZE = 9.5;
const INDENT = 18;
const CELL_PADDING = 4;
/** Unread bytes the writer lets pile up before it waits for the reader. */
const UNREAD_LIMIT = 4 * 1024 * 1024;

export type PdfOptions = { title: string; loadImage: (src: string) => Promise<LoadedImage | null> };

type Box = { x: number; width: number };
type Style = { size: number; bold: boolean; italic: boolean };

/** Starts writing and returns the PDF stream at once; a failure destroys the stream with the error. */
export function docToPdf(doc: PMNode, options: PdfOptions): NodeJS.ReadableStream & { destroy(error?: Error): void } {
  const pdf = new PDFDocument({ size: 'A4', margins: MARGIN, autoFirstPage: false, info: { Title: options.title, Producer: 'Trellis' }, lang: 'und' } as PDFKit.PDFDocumentOptions);
  const writer = new PdfWriter(pdf, options);
  writer.write(doc).catch((error: Error) => pdf.destroy(error));
  return pdf;
}

class PdfWriter {
  private readonly registered = new Set<string>();
  private pageNumber = 0;
  /** The text colour set in the page's content: set again only when it changes (a long doc's text comes in tens of thousands of pieces). */
  private fill = '#000000';
  private readonly turns = new EventLoopTurns(CONVERSION_TURN_MS);

  constructor(
    private readonly pdf: PDFKit.PDFDocument,
    private readonly options: PdfOptions,
  ) {
    pdf.on('pageAdded', () => this.footer());
  }

  async write(doc: PMNode) {
    this.pdf.addPage();
    const box = { x: MARGIN.left, width: this.pdf.page.width - MARGIN.left - MARGIN.right };
    for (let i = 0; i < doc.childCount; i++) {
      await this.block(doc.child(i), box, { size: BODY_SIZE, bold: false, italic: false });
      await this.turns.yieldIfLong();
      await this.readerCaughtUp();
    }
    this.pdf.end();
  }

  private async readerCaughtUp() {
    while (this.pdf.readableLength > UNREAD_LIMIT && !this.pdf.destroyed) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.pdf.destroyed) throw new Error('The reader went away.');
  }

  /** The page number, centred in the bottom margin; drawn as the page starts, without moving the text cursor. */
  private footer() {
    this.pageNumber += 1;
    const { pdf } = this;
    const { x, y } = pdf;
    const bottom = pdf.page.margins.bottom;
    pdf.page.margins.bottom = 0;
    this.setFont(fontRuns(String(this.pageNumber), { bold: false, italic: false })[0]!.font, 9);
    pdf.fillColor('#666666').text(String(this.pageNumber), 0, pdf.page.height - bottom / 2 - 5, { width: pdf.page.width, align: 'center', lineBreak: false });
    // A new page's content starts black: the text that goes on (a link cut by the page end) takes its colour again.
    pdf.fillColor(this.fill);
    pdf.page.margins.bottom = bottom;
    pdf.x = x;
    pdf.y = y;
  }

  private fillColor(color: string) {
    if (color === this.fill) return;
    this.pdf.fillColor(color);
    this.fill = color;
  }

  private setFont(name: string, size: number) {
    if (!this.registered.has(name)) {
      const file = name.startsWith('Courier') ? null : fontFile(name);
      if (file) this.pdf.registerFont(name, fontBytes(file));
      this.registered.add(name);
    }
    this.pdf.font(name).fontSize(size);
  }

  private get bottom() {
    return this.pdf.page.height - MARGIN.bottom;
  }

  /** Starts a new page when less than `height` is left on this one (and this one is not fresh). */
  private ensureRoom(height: number) {
    if (this.pdf.y + height > this.bottom && this.pdf.y > MARGIN.top + 1) this.pdf.addPage();
  }

  private gap(points: number) {
    this.pdf.y += points;
  }

  private async block(node: PMNode, box: Box, style: Style): Promise<void> {
    switch (node.type.name) {
      case 'heading': {
        const size = HEADING_SIZES[(node.attrs.level as number) - 1] ?? BODY_SIZE;
        this.gap(size * 0.4);
        this.ensureRoom(size * 2.5);
        await this.textblock(inlineRuns(node), box, { size, bold: true, italic: style.italic });
        this.gap(size * 0.3);
        return;
      }
      case 'paragraph':
        await this.textblock(inlineRuns(node), box, style);
        this.gap(style.size * 0.5);
        return;
      case 'blockquote': {
        const top = this.pdf.y;
        const page = this.pageNumber;
        await this.children(node, { x: box.x + INDENT, width: box.width - INDENT }, { ...style, italic: true });
        if (page === this.pageNumber) this.pdf.save().lineWidth(2).strokeColor('#cccccc').moveTo(box.x + 4, top).lineTo(box.x + 4, this.pdf.y - style.size * 0.5).stroke().restore();
        return;
      }
      case 'bulletList':
      case 'orderedList':
      case 'taskList':
        await this.list(node, box, style);
        this.gap(style.size * 0.2);
        return;
      case 'codeBlock':
        this.codeBlock(node.textContent, box);
        return;
      case 'horizontalRule':
        this.ensureRoom(12);
        this.pdf.save().lineWidth(0.75).strokeColor('#999999').moveTo(box.x, this.pdf.y + 4).lineTo(box.x + box.width, this.pdf.y + 4).stroke().restore();
        this.gap(12);
        return;
      case 'table':
        await this.table(node, box, style);
        this.gap(style.size * 0.6);
        return;
      default:
        if (node.isTextblock) await this.textblock(inlineRuns(node), box, style);
        else await this.children(node, box, style);
    }
  }

  private async children(node: PMNode, box: Box, style: Style) {
    for (let i = 0; i < node.childCount; i++) await this.block(node.child(i), box, style);
  }

  private async list(node: PMNode, box: Box, style: Style) {
    const start = (node.attrs.start as number | undefined) ?? 1;
    for (let i = 0; i < node.childCount; i++) {
      const item = node.child(i);
      const marker = node.type.name === 'orderedList' ? `${start + i}.` : node.type.name === 'taskList' ? (item.attrs.checked ? '[x]' : '[ ]') : '•';
      this.ensureRoom(style.size * 1.4);
      const y = this.pdf.y;
      this.setFont(fontRuns(marker, style)[0]!.font, style.size);
      this.pdf.text(marker, box.x, y, { width: INDENT - 3, align: 'right', lineBreak: false });
      this.pdf.y = y;
      const inner = { x: box.x + INDENT + 4, width: box.width - INDENT - 4 };
      for (let j = 0; j < item.childCount; j++) {
        const child = item.child(j);
        if (child.type.name === 'paragraph') {
          await this.textblock(inlineRuns(child), inner, style);
          this.gap(style.size * 0.15);
        } else await this.block(child, inner, style);
      }
    }
  }

  private codeBlock(text: string, box: Box) {
    const ascii = /^[\x20-\x7e\n\t]*$/.test(text);
    const lines = text.replace(/\t/g, '    ');
    this.pdf.font('Courier').fontSize(CODE_SIZE);
    const height = ascii ? this.pdf.heightOfString(lines || ' ', { width: box.width - 12 }) : 0;
    this.ensureRoom(Math.min(height + 10, 200));
    if (ascii && this.pdf.y + height + 8 <= this.bottom) this.pdf.save().rect(box.x, this.pdf.y, box.width, height + 8).fill('#f3f3f3').restore();
    this.fillColor('#000000');
    if (ascii) {
      this.setFont('Courier', CODE_SIZE);
      this.pdf.text(lines || ' ', box.x + 6, this.pdf.y + 4, { width: box.width - 12 });
    } else this.runs([{ kind: 'text', text: lines, bold: false, italic: false, strike: false, code: true, link: null }], { x: box.x + 6, width: box.width - 12 }, { size: CODE_SIZE, bold: false, italic: false });
    this.gap(BODY_SIZE * 0.8);
  }

  /** A textblock: its text flows as one paragraph; an image in it stands on its own line between the text before and after. */
  private async textblock(runs: InlineRun[], box: Box, style: Style) {
    let pending: InlineRun[] = [];
    for (const run of runs) {
      if (run.kind !== 'image') {
        pending.push(run);
        continue;
      }
      if (pending.length) this.runs(pending, box, style);
      pending = [];
      await this.image(run.src, run.alt, box, style);
    }
    if (pending.length || runs.length === 0) this.runs(pending, box, style);
  }

  /** Text in several fonts as one flowing paragraph (pdfkit's continued text). */
  private runs(runs: InlineRun[], box: Box, style: Style) {
    type Piece = { text: string; font: string; size: number; link: string | null; strike: boolean };
    const pieces: Piece[] = [];
    for (const run of runs) {
      if (run.kind === 'break') {
        pieces.push({ text: '\n', font: pieces.at(-1)?.font ?? fontRuns(' ', style)[0]!.font, size: style.size, link: null, strike: false });
        continue;
      }
      if (run.kind !== 'text') continue;
      const face: FontStyle = { bold: style.bold || run.bold, italic: style.italic || run.italic };
      for (const part of run.code ? codeRuns(run.text, face) : fontRuns(run.text, face)) {
        pieces.push({ text: part.text, font: part.font, size: run.code ? style.size * 0.92 : style.size, link: run.link, strike: run.strike });
      }
    }
    if (pieces.length === 0) {
      this.gap(style.size * 0.6);
      return;
    }
    this.ensureRoom(style.size * 1.3);
    pieces.forEach((piece, i) => {
      this.setFont(piece.font, piece.size);
      const options = {
        width: box.width,
        continued: i < pieces.length - 1,
        link: piece.link && /^(https?:|mailto:)/i.test(piece.link) ? piece.link : null,
        underline: Boolean(piece.link),
        strike: piece.strike,
        lineGap: 2,
      } as PDFKit.Mixins.TextOptions;
      this.fillColor(piece.link ? '#1a55b0' : '#000000');
      if (i === 0) this.pdf.text(piece.text, box.x, this.pdf.y, options);
      else this.pdf.text(piece.text, options);
    });
    this.fillColor('#000000');
  }

  private async image(src: string, alt: string | null, box: Box, style: Style) {
    const image = await this.options.loadImage(src);
    if (!image) {
      this.runs([{ kind: 'text', text: `[${alt || 'image'}]`, bold: false, italic: true, strike: false, code: false, link: null }], box, style);
      return;
    }
    const maxHeight = this.bottom - MARGIN.top - 10;
    let width = Math.min(box.width, image.width * 0.75);
    let height = (width * image.height) / image.width;
    if (height > maxHeight) {
      width = (width * maxHeight) / height;
      height = maxHeight;
    }
    this.ensureRoom(height + 6);
    this.pdf.image(image.bytes, box.x, this.pdf.y, { width, height });
    this.pdf.y += height + 6;
  }

  private async table(node: PMNode, box: Box, style: Style) {
    const columns = Math.max(1, ...rowsOf(node).map((row) => cellsOf(row).reduce((sum, cell) => sum + ((cell.attrs.colspan as number) || 1), 0)));
    const unit = box.width / columns;
    for (const row of rowsOf(node)) {
      const cells = cellsOf(row);
      this.pdf.font(fontRuns('a', style)[0]!.font).fontSize(style.size);
      const estimate = Math.max(
        style.size * 1.3,
        ...cells.map((cell) => this.pdf.heightOfString(cell.textContent || ' ', { width: unit * ((cell.attrs.colspan as number) || 1) - 2 * CELL_PADDING })),
      );
      this.ensureRoom(Math.min(estimate + 2 * CELL_PADDING + style.size, this.bottom - MARGIN.top - 10));
      const top = this.pdf.y;
      const page = this.pageNumber;
      let x = box.x;
      let bottom = top;
      const spans: Array<{ x: number; width: number }> = [];
      for (const cell of cells) {
        const width = unit * ((cell.attrs.colspan as number) || 1);
        this.pdf.y = top + CELL_PADDING;
        const cellStyle = { ...style, bold: style.bold || cell.type.name === 'tableHeader' };
        for (let i = 0; i < cell.childCount; i++) {
          const child = cell.child(i);
          if (child.isTextblock) await this.textblock(inlineRuns(child), { x: x + CELL_PADDING, width: width - 2 * CELL_PADDING }, cellStyle);
          else await this.block(child, { x: x + CELL_PADDING, width: width - 2 * CELL_PADDING }, cellStyle);
        }
        bottom = this.pageNumber === page ? Math.max(bottom, this.pdf.y) : this.pdf.y;
        spans.push({ x, width });
        x += width;
      }
      const rowBottom = bottom + CELL_PADDING;
      if (this.pageNumber === page) {
        this.pdf.save().lineWidth(0.5).strokeColor('#999999');
        for (const span of spans) this.pdf.rect(span.x, top, span.width, rowBottom - top).stroke();
        this.pdf.restore();
      }
      this.pdf.x = box.x;
      this.pdf.y = rowBottom;
    }
  }
}

function rowsOf(table: PMNode): PMNode[] {
  const rows: PMNode[] = [];
  table.forEach((row) => rows.push(row));
  return rows;
}

function cellsOf(row: PMNode): PMNode[] {
  const cells: PMNode[] = [];
  row.forEach((cell) => cells.push(cell));
  return cells;
}

/** Code in Courier where it can be (printable ASCII), the Noto slices elsewhere. */
function codeRuns(text: string, face: FontStyle) {
  const runs: Array<{ text: string; font: string }> = [];
  for (const part of text.split(/([^\x20-\x7e]+)/)) {
    if (!part) continue;
    if (/^[\x20-\x7e]+$/.test(part)) runs.push({ text: part, font: 'Courier' });
    else runs.push(...fontRuns(part, face));
  }
  return runs;
}
