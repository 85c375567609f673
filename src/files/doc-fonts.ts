import { readFileSync } from 'node:fs';
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
 * glyph table as it is, which WOFF2 stores transformed.
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
  return slice.ranges.some(([from, to]) => codePoint >= from && codePoint <= to);
}

/** A run of text set in one font slice. */
export type FontRun = { text: string; font: string; file: string };

/** Per style, the slice chosen for each code point met so far (null: none covers it). */
const chosenSlices = new Map<string, Map<number, Slice | null>>();

function sliceFor(key: string, slices: Slice[], codePoint: number): Slice | null {
  let memo = chosenSlices.get(key);
  if (!memo) chosenSlices.set(key, (memo = new Map()));
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
 * glyph rather than vanishing.
 */
export function fontRuns(text: string, style: FontStyle): FontRun[] {
  const key = styleKey(style);
  const slices = stylesLoaded().get(key)!;
  const runs: FontRun[] = [];
  let current: { run: FontRun; slice: Slice } | null = null;
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    if (current && (isCombining(codePoint) || covers(current.slice, codePoint))) {
      current.run.text += char;
      continue;
    }
    const slice = sliceFor(key, slices, codePoint);
    if (current && !slice) {
      current.run.text += char;
      continue;
    }
    const chosen = slice ?? slices.find((s) => s.name.includes('-latin-'))!;
    current = { run: { text: char, font: chosen.name, file: chosen.file }, slice: chosen };
    runs.push(current.run);
  }
  return runs;
}

function isCombining(codePoint: number): boolean {
  return (codePoint >= 0x300 && codePoint <= 0x36f) || codePoint === 0x200c || codePoint === 0x200d || (codePoint >= 0xfe00 && codePoint <= 0xfe0f);
}

const bytesCache = new Map<string, Buffer>();

/** The bytes of a slice's file, read once per process (a slice is 10 to 80 KB). */
export function fontBytes(file: string): Buffer {
  let bytes = bytesCache.get(file);
  if (!bytes) {
    bytes = readFileSync(file);
    bytesCache.set(file, bytes);
  }
  return bytes;
}
