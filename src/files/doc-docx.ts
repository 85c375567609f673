import {
  AlignmentType,
  BorderStyle,
  Document,
  ExternalHyperlink,
  Footer,
  HeadingLevel,
  ImageRun,
  LevelFormat,
  Packer,
  PageNumber,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
  type ILevelsOptions,
  type ParagraphChild,
} from 'docx';
import type { Node as PMNode } from 'prosemirror-model';
import { Readable } from 'node:stream';
import { EventLoopTurns } from '../lib/event-loop-turns';
import { CONVERSION_TURN_MS, inlineRuns, type LoadedImage } from './doc-runs';

/**
 * A doc as a Word file (the `docx` package). Written so that importing it
 * again (./doc-import.ts, through mammoth) gives the same doc: headings
 * use Word's Heading 1–6 styles, lists Word numbering (bullets or
 * decimals, nested by level), tables mark their first row as the header
 * row, and what Word has no element for uses named styles the import maps
 * back: "Code Block" paragraphs, "Code" runs, "Quote" paragraphs and a
 * "Horizontal Rule" paragraph; a mention is a link to `mention:kind/id`.
 * Each page carries its number in the footer.
 */

export type DocxOptions = { title: string; loadImage: (src: string) => Promise<LoadedImage | null> };

/** Style names the import maps back to doc nodes and marks (./doc-import.ts `DOCX_STYLE_MAP`). */
export const DOCX_STYLES = { codeBlock: 'Code Block', code: 'Code', quote: 'Quote', rule: 'Horizontal Rule' } as const;

const HEADINGS = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4, HeadingLevel.HEADING_5, HeadingLevel.HEADING_6];
const MAX_IMAGE_WIDTH = 600;

type Block = Paragraph | Table;
type Context = { listLevel: number; quote: boolean };

function levels(format: 'bullet' | 'decimal', start: number): ILevelsOptions[] {
  return Array.from({ length: 9 }, (_, level) => ({
    level,
    format: format === 'bullet' ? LevelFormat.BULLET : LevelFormat.DECIMAL,
    text: format === 'bullet' ? ['•', '◦', '▪'][level % 3]! : `%${level + 1}.`,
    start: level === 0 ? start : 1,
    alignment: AlignmentType.LEFT,
    style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
  }));
}

class DocxBuilder {
  private instance = 0;
  private readonly orderedStarts = new Set<number>([1]);
  private readonly turns = new EventLoopTurns(CONVERSION_TURN_MS);

  constructor(private readonly options: DocxOptions) {}

  async build(doc: PMNode): Promise<Document> {
    const children: Block[] = [];
    for (let i = 0; i < doc.childCount; i++) {
      children.push(...(await this.block(doc.child(i), { listLevel: 0, quote: false })));
      await this.turns.yieldIfLong();
    }
    return new Document({
      title: this.options.title,
      creator: 'Trellis',
      styles: {
        paragraphStyles: [
          { id: 'CodeBlock', name: DOCX_STYLES.codeBlock, basedOn: 'Normal', run: { font: 'Courier New', size: 19 }, paragraph: { spacing: { before: 0, after: 0 } } },
          { id: 'Quote', name: DOCX_STYLES.quote, basedOn: 'Normal', run: { italics: true, color: '555555' }, paragraph: { indent: { left: 720 } } },
          {
            id: 'HorizontalRule',
            name: DOCX_STYLES.rule,
            basedOn: 'Normal',
            paragraph: { border: { bottom: { style: BorderStyle.SINGLE, size: 6, color: '999999', space: 1 } } },
          },
        ],
        characterStyles: [{ id: 'Code', name: DOCX_STYLES.code, basedOn: 'DefaultParagraphFont', run: { font: 'Courier New' } }],
      },
      numbering: {
        config: [
          { reference: 'bullets', levels: levels('bullet', 1) },
          ...[...this.orderedStarts].map((start) => ({ reference: `numbers-${start}`, levels: levels('decimal', start) })),
        ],
      },
      sections: [
        {
          footers: { default: new Footer({ children: [new Paragraph({ alignment: AlignmentType.CENTER, children: [new TextRun({ children: [PageNumber.CURRENT] })] })] }) },
          children: children.length ? children : [new Paragraph({})],
        },
      ],
    });
  }

  private async block(node: PMNode, context: Context): Promise<Block[]> {
    switch (node.type.name) {
      case 'heading':
        return [new Paragraph({ heading: HEADINGS[(node.attrs.level as number) - 1], children: await this.inline(node) })];
      case 'paragraph':
        return [new Paragraph({ ...(context.quote ? { style: 'Quote' } : {}), children: await this.inline(node) })];
      case 'blockquote':
        return this.children(node, { ...context, quote: true });
      case 'bulletList':
      case 'orderedList':
      case 'taskList':
        return this.list(node, context);
      case 'codeBlock':
        return (node.textContent || '').split('\n').map((line) => new Paragraph({ style: 'CodeBlock', children: [new TextRun({ text: line })] }));
      case 'horizontalRule':
        return [new Paragraph({ style: 'HorizontalRule', children: [] })];
      case 'table':
        return [await this.table(node)];
      default:
        return node.isTextblock ? [new Paragraph({ children: await this.inline(node) })] : this.children(node, context);
    }
  }

  private async children(node: PMNode, context: Context): Promise<Block[]> {
    const blocks: Block[] = [];
    for (let i = 0; i < node.childCount; i++) blocks.push(...(await this.block(node.child(i), context)));
    return blocks;
  }

  private async list(node: PMNode, context: Context): Promise<Block[]> {
    const start = (node.attrs.start as number | undefined) ?? 1;
    const ordered = node.type.name === 'orderedList';
    if (ordered) this.orderedStarts.add(start);
    const reference = ordered ? `numbers-${start}` : 'bullets';
    const instance = ++this.instance;
    const level = Math.min(context.listLevel, 8);
    const blocks: Block[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const item = node.child(i);
      const box = node.type.name === 'taskList' ? [new TextRun({ text: item.attrs.checked ? '☒ ' : '☐ ' })] : [];
      for (let j = 0; j < item.childCount; j++) {
        const child = item.child(j);
        if (j === 0 && child.type.name === 'paragraph') {
          blocks.push(new Paragraph({ numbering: { reference, level, instance }, children: [...box, ...(await this.inline(child))] }));
        } else blocks.push(...(await this.block(child, { ...context, listLevel: context.listLevel + 1 })));
      }
    }
    return blocks;
  }

  private async table(node: PMNode): Promise<Table> {
    const rows: TableRow[] = [];
    for (let r = 0; r < node.childCount; r++) {
      const row = node.child(r);
      const cells: TableCell[] = [];
      for (let c = 0; c < row.childCount; c++) {
        const cell = row.child(c);
        const content = await this.children(cell, { listLevel: 0, quote: false });
        cells.push(
          new TableCell({
            children: content.length ? content : [new Paragraph({})],
            columnSpan: (cell.attrs.colspan as number) > 1 ? (cell.attrs.colspan as number) : undefined,
            rowSpan: (cell.attrs.rowspan as number) > 1 ? (cell.attrs.rowspan as number) : undefined,
          }),
        );
      }
      // Only a header row says so: a `tblHeader` element of any value reads as a header row to Word's converter.
      const header = r === 0 && row.firstChild?.type.name === 'tableHeader';
      rows.push(new TableRow({ children: cells, ...(header ? { tableHeader: true } : {}) }));
    }
    return new Table({ rows, width: { size: 100, type: WidthType.PERCENTAGE } });
  }

  private async inline(block: PMNode): Promise<ParagraphChild[]> {
    const children: ParagraphChild[] = [];
    for (const run of inlineRuns(block)) {
      if (run.kind === 'break') children.push(new TextRun({ break: 1 }));
      else if (run.kind === 'image') children.push(await this.image(run.src, run.alt));
      else if (run.mention) {
        const link = `mention:${encodeURIComponent(run.mention.kind)}/${encodeURIComponent(run.mention.id)}`;
        children.push(new ExternalHyperlink({ link, children: [new TextRun({ text: run.text, ...(run.bold ? { bold: true } : {}), ...(run.italic ? { italics: true } : {}) })] }));
      } else {
        // Only what is on: a property given as false is still written (`<w:b w:val="false"/>`), three elements a run for nothing.
        const format = { text: run.text, ...(run.bold ? { bold: true } : {}), ...(run.italic ? { italics: true } : {}), ...(run.strike ? { strike: true } : {}) };
        if (run.link) children.push(new ExternalHyperlink({ link: run.link, children: [new TextRun({ ...format, style: 'Hyperlink' })] }));
        else children.push(new TextRun({ ...format, ...(run.code ? { style: 'Code' } : {}) }));
      }
    }
    return children;
  }

  private async image(src: string, alt: string | null): Promise<ParagraphChild> {
    const image = await this.options.loadImage(src);
    if (!image) return new TextRun({ text: `[${alt || 'image'}]`, italics: true });
    const width = Math.min(MAX_IMAGE_WIDTH, image.width);
    const height = Math.round((width * image.height) / image.width);
    return new ImageRun({ type: image.type, data: image.bytes, transformation: { width, height }, altText: { name: alt ?? '', description: alt ?? '', title: alt ?? '' } });
  }
}

/** The Word file as a stream (its parts are built first, giving the event loop back between blocks). */
export async function docToDocx(doc: PMNode, options: DocxOptions): Promise<Readable> {
  const document = await new DocxBuilder(options).build(doc);
  // Packer's stream is an old-style stream (no async iteration): wrapped, it reads like any other.
  return new Readable().wrap(Packer.toStream(document) as unknown as NodeJS.ReadableStream);
}
