import type { Node as PMNode } from 'prosemirror-model';
import { loadSharp } from './images';

/**
 * What the Word and PDF writers share: a block's inline content as runs,
 * and the images a doc shows, loaded as PNG or JPEG (the two formats both
 * embed as they are).
 */

export type TextRun = {
  kind: 'text';
  text: string;
  bold: boolean;
  italic: boolean;
  strike: boolean;
  code: boolean;
  link: string | null;
  /** For a mention, its `@label` text stands for this principal. */
  mention?: { kind: string; id: string };
};
export type InlineRun = TextRun | { kind: 'break' } | { kind: 'image'; src: string; alt: string | null };

/** The inline content of a textblock; a mention is its `@label`, in the style around it. */
export function inlineRuns(block: PMNode): InlineRun[] {
  const runs: InlineRun[] = [];
  block.forEach((child) => {
    if (child.type.name === 'hardBreak') runs.push({ kind: 'break' });
    else if (child.type.name === 'image') runs.push({ kind: 'image', src: String(child.attrs.src ?? ''), alt: (child.attrs.alt as string | null) ?? null });
    else {
      const text = child.isText ? child.text! : child.type.name === 'mention' ? `@${child.attrs.label}` : child.textContent;
      const has = (name: string) => child.marks.some((mark) => mark.type.name === name);
      const link = child.marks.find((mark) => mark.type.name === 'link');
      const mention = child.type.name === 'mention' ? { mention: { kind: String(child.attrs.kind), id: String(child.attrs.id) } } : {};
      runs.push({ kind: 'text', text, bold: has('bold'), italic: has('italic'), strike: has('strike'), code: has('code'), link: link ? String(link.attrs.href) : null, ...mention });
    }
  });
  return runs;
}

export type LoadedImage = { bytes: Buffer; type: 'png' | 'jpg'; width: number; height: number };

/** Reads an image's bytes by its `src`; null when the doc's image is not one this server holds. */
export type ImageSource = (src: string) => Promise<Buffer | null>;

/** Images at most this wide are embedded at their size; wider ones are scaled down first. */
const MAX_EMBEDDED_WIDTH = 1600;

/**
 * Loads every image of a doc once (a doc may show one image many times),
 * as PNG or JPEG at most 1600 px wide; an image that cannot be read or
 * decoded is left out (its alt text stands in).
 */
export function imageLoader(source: ImageSource): (src: string) => Promise<LoadedImage | null> {
  const cache = new Map<string, Promise<LoadedImage | null>>();
  return (src) => {
    let loading = cache.get(src);
    if (!loading) {
      loading = (async () => {
        const bytes = await source(src).catch(() => null);
        if (!bytes) return null;
        try {
          const sharp = await loadSharp();
          const image = sharp(bytes, { limitInputPixels: 40_000_000 }).rotate();
          const meta = await image.metadata();
          const keepJpeg = meta.format === 'jpeg';
          const resized = (meta.width ?? 0) > MAX_EMBEDDED_WIDTH ? image.resize({ width: MAX_EMBEDDED_WIDTH }) : image;
          const { data, info } = await (keepJpeg ? resized.jpeg({ quality: 90 }) : resized.png()).toBuffer({ resolveWithObject: true });
          return { bytes: data, type: keepJpeg ? 'jpg' : 'png', width: info.width, height: info.height };
        } catch {
          return null;
        }
      })();
      cache.set(src, loading);
    }
    return loading;
  };
}

/** How long a doc conversion or import runs between blocks before it hands the event loop back (../lib/event-loop-turns.ts). */
export const CONVERSION_TURN_MS = 15;
