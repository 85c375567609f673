import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The fonts a PDF export embeds: Noto Sans (Latin, Cyrillic, Greek,
 * Vietnamese, Devanagari, in regular, bold, italic and bold italic) and
 * Noto Sans SC (Chinese, with the kana and Hangul it carries, regular
 * only), from the @fontsource packages. Each package ships a font as
 * slices by Unicode range (its CSS says which slice covers what); a
 * character is set in the first slice of its style that covers it, so a
 * PDF embeds only the slices, and of them only the glyphs, that its text
 * uses. The WOFF (not WOFF2) files are read: PDF embedding copies the
 * glyph table as it is, which WOFF2 stores transformed. They are handed
 * to the PDF writer unpacked, as the plain font file inside (`sfntOfWoff`):
 * its font reader inflates a WOFF table each time it reads from it, the
 * whole glyph table for every glyph measured or embedded (a fifth of a
 * 1 MB doc's PDF time went there).
 */

export type FontStyle = { bold: boolean; italic: boolean };

/** A slice: the file and the code points it covers (sorted ranges). */
type Slice = { name: string; file: string; ranges: Array<[number, number]> };

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`));
}

function parseRanges(unicodeRange: string): Array<[number, number]> {
  return unicodeRange
    .split(',')
    .map((part) => part.trim().replace(/^U\+/i, ''))
    .map((part) => {
      const [from, to] = part.split('-').map((hex) => Number.parseInt(hex, 16));
      return [from!, to ?? from!] as [number, number];
    });
}

/** The slices a fontsource CSS file declares, in its order. */
function slicesOf(pkg: string, css: string, prefix: string): Slice[] {
  const dir = packageDir(pkg);
  const text = readFileSync(path.join(dir, css), 'utf8');
  const slices: Slice[] = [];
  for (const match of text.matchAll(/url\(\.\/files\/([^)]+)\.woff2\)[^;]*;\s*unicode-range:\s*([^;]+);/g)) {
    slices.push({ name: `${prefix}:${match[1]}`, file: path.join(dir, 'files', `${match[1]}.woff`), ranges: parseRanges(match[2]!) });
  }
  return slices;
}

const STYLE_CSS: Record<string, string> = { '00': '400.css', '10': '700.css', '01': '400-italic.css', '11': '700-italic.css' };

let loaded: Map<string, Slice[]> | null = null;

function stylesLoaded(): Map<string, Slice[]> {
  if (loaded) return loaded;
  const cjk = slicesOf('@fontsource/noto-sans-sc', '400.css', 'sc');
  loaded = new Map(Object.entries(STYLE_CSS).map(([key, css]) => [key, [...slicesOf('@fontsource/noto-sans', css, `ns${key}`), ...cjk]]));
  for (const slices of loaded.values()) for (const slice of slices) filesByName.set(slice.name, slice.file);
  return loaded;
}

const filesByName = new Map<string, string>();

/** The file of a slice named by a run's `font`. */
export function fontFile(name: string): string | null {
  stylesLoaded();
  return filesByName.get(name) ?? null;
}

const styleKey = (style: FontStyle) => `${style.bold ? 1 : 0}${style.italic ? 1 : 0}`;

function covers(slice: Slice, codePoint: number): boolean {
  for (const range of slice.ranges) if (codePoint >= range[0] && codePoint <= range[1]) return true;
  return false;
}

/** A run of text set in one font slice. */
export type FontRun = { text: string; font: string; file: string };

/** Per style, the slice chosen for each code point met so far (null: none covers it). */
const chosenSlices = new Map<string, Map<number, Slice | null>>();

function sliceFor(memo: Map<number, Slice | null>, slices: Slice[], codePoint: number): Slice | null {
  let slice = memo.get(codePoint);
  if (slice === undefined) {
    slice = slices.find((s) => covers(s, codePoint)) ?? null;
    memo.set(codePoint, slice);
  }
  return slice;
}

/**
 * Cuts `text` into runs by the slice that sets each character (the first
 * of its style covering it). A character the current run's slice also
 * covers stays in it, as do combining marks and joiners; a character no
 * slice covers stays in the run around it, where it shows as a missing
 * glyph rather than vanishing. (Every character of a long doc's PDF passes
 * here: a run's text is cut from `text` once it ends, not built a
 * character at a time.)
 */
export function fontRuns(text: string, style: FontStyle): FontRun[] {
  const key = styleKey(style);
  const slices = stylesLoaded().get(key)!;
  let memo = chosenSlices.get(key);
  if (!memo) chosenSlices.set(key, (memo = new Map()));
  const runs: FontRun[] = [];
  let current: Slice | null = null;
  let start = 0;
  for (let i = 0; i < text.length; ) {
    const codePoint = text.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const first = sliceFor(memo, slices, codePoint);
    const stays = current !== null && (first === current || first === null || isCombining(codePoint) || covers(current, codePoint));
    if (!stays) {
      if (current) runs.push({ text: text.slice(start, i), font: current.name, file: current.file });
      current = first ?? slices.find((s) => s.name.includes('-latin-'))!;
      start = i;
    }
    i += width;
  }
  if (current) runs.push({ text: text.slice(start), font: current.name, file: current.file });
  return runs;
}

function isCombining(codePoint: number): boolean {
  return (codePoint >= 0x300 && codePoint <= 0x36f) || codePoint === 0x200c || codePoint === 0x200d || (codePoint >= 0xfe00 && codePoint <= 0xfe0f);
}

const bytesCache = new Map<string, Buffer>();

/** The font file of a slice, as the plain TrueType/OpenType file its WOFF wraps, read and unpacked once per process (a slice is 10 to 80 KB). */
export function fontBytes(file: string): Buffer {
  let bytes = bytesCache.get(file);
  if (!bytes) {
    bytes = sfntOfWoff(readFileSync(file));
    bytesCache.set(file, bytes);
  }
  return bytes;
}

/**
 * The font file a WOFF 1.0 file wraps: the same tables, inflated where
 * they were deflated, behind the plain file's table directory (W3C WOFF
 * 1.0, section 5; OpenType's offset table). Anything else is returned as
 * it is.
 */
export function sfntOfWoff(woff: Buffer): Buffer {
  if (woff.length < 44 || woff.toString('latin1', 0, 4) !== 'wOFF') return woff;
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  const tables = Array.from({ length: numTables }, (_, i) => {
    const entry = 44 + i * 20;
    const tag = woff.readUInt32BE(entry);
    const offset = woff.readUInt32BE(entry + 4);
    const compLength = woff.readUInt32BE(entry + 8);
    const origLength = woff.readUInt32BE(entry + 12);
    const checksum = woff.readUInt32BE(entry + 16);
    const stored = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? inflateSync(stored) : stored;
    if (data.length !== origLength) throw new Error('A WOFF table does not unpack to its declared length.');
    return { tag, checksum, data };
  });
  const padded = (length: number) => (length + 3) & ~3;
  const headerLength = 12 + 16 * numTables;
  const out = Buffer.alloc(headerLength + tables.reduce((sum, table) => sum + padded(table.data.length), 0));
  let power = 1;
  let log = 0;
  while (power * 2 <= numTables) {
    power *= 2;
    log += 1;
  }
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(power * 16, 6);
  out.writeUInt16BE(log, 8);
  out.writeUInt16BE(numTables * 16 - power * 16, 10);
  let offset = headerLength;
  tables.forEach((table, i) => {
    const record = 12 + i * 16;
    out.writeUInt32BE(table.tag, record);
    out.writeUInt32BE(table.checksum, record + 4);
    out.writeUInt32BE(offset, record + 8);
    out.writeUInt32BE(table.data.length, record + 12);
    table.data.copy(out, offset);
    offset += padded(table.data.length);
  });
  return out;
}
