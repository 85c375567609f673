import { Document, ExternalHyperlink, FootnoteReferenceRun, HeadingLevel, ImageRun, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import sharp from 'sharp';

/** A Word file made with a Word-compatible writer (the `docx` package), with what imports must keep. */
export async function sampleWordFile(): Promise<Buffer> {
  const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();
  const bullets = [0, 1, 2].map((level) => ({ level, format: LevelFormat.BULLET, text: '•' }));
  const numbers = [0, 1].map((level) => ({ level, format: LevelFormat.DECIMAL, text: `%${level + 1}.` }));
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const document = new Document({
    numbering: { config: [{ reference: 'bullets', levels: bullets }, { reference: 'numbers', levels: numbers }] },
    footnotes: { 1: { children: [new Paragraph('Ссылка на источник.')] } },
    sections: [
      {
        children: [
          new Paragraph({ heading: HeadingLevel.HEADING_1, children: [new TextRun('Überschrift – 報告')] }),
          new Paragraph({
            children: [
              new TextRun('Plain, '),
              new TextRun({ text: 'bold', bold: true }),
              new TextRun(', '),
              new TextRun({ text: 'italic', italics: true }),
              new TextRun(', '),
              new TextRun({ text: 'under', underline: {} }),
              new TextRun(', '),
              new TextRun({ text: 'gone', strike: true }),
              new TextRun(' and a '),
              new ExternalHyperlink({ link: 'https://example.com/', children: [new TextRun('link')] }),
              new TextRun('.'),
              new FootnoteReferenceRun(1),
            ],
          }),
          new Paragraph({ heading: HeadingLevel.HEADING_2, children: [new TextRun('Списки')] }),
          new Paragraph({ numbering: { reference: 'bullets', level: 0 }, children: [new TextRun('first')] }),
          new Paragraph({ numbering: { reference: 'bullets', level: 1 }, children: [new TextRun('nested één')] }),
          new Paragraph({ numbering: { reference: 'bullets', level: 0 }, children: [new TextRun('second')] }),
          new Paragraph({ numbering: { reference: 'numbers', level: 0 }, children: [new TextRun('one')] }),
          new Paragraph({ numbering: { reference: 'numbers', level: 0 }, children: [new TextRun('two')] }),
          new Table({ rows: [new TableRow({ tableHeader: true, children: [cell('Name'), cell('Città')] }), new TableRow({ children: [cell('Ada'), cell('Zürich')] })] }),
          new Paragraph({ children: [new ImageRun({ type: 'png', data: png, transformation: { width: 20, height: 10 }, altText: { name: 'chart', description: 'A chart', title: 'chart' } })] }),
        ],
      },
    ],
  });
  return Packer.toBuffer(document);
}

/** The Markdown that file imports to, the image's address left out (it is new every time). */
export const SAMPLE_WORD_MARKDOWN = [
  '# Überschrift – 報告',
  '',
  'Plain, **bold**, *italic*, under, ~~gone~~ and a [link](https://example.com/).\\[1\\]',
  '',
  '## Списки',
  '',
  '- first',
  '  - nested één',
  '- second',
  '',
  '1. one',
  '2. two',
  '',
  '| Name | Città |',
  '| --- | --- |',
  '| Ada | Zürich |',
  '',
  '![A chart](IMAGE)',
  '',
  '1. Ссылка на источник.',
  '',
].join('\n');
