/**
 * The images and links a doc points at, and the doc with them pointed
 * elsewhere: an imported file's images once they are stored here, an
 * imported folder's links to its own pages once those are surfaces here.
 * Works on the ProseMirror JSON, so it runs wherever the doc is (a
 * conversion thread). Browser-safe.
 */
import type { Node as PMNode } from 'prosemirror-model';
import { docFromJSON } from './json.js';

type JSONNode = Record<string, unknown>;

/** The distinct image sources and link targets of a doc, as they appear. */
export function docReferences(doc: PMNode): { images: string[]; links: string[] } {
  const images = new Set<string>();
  const links = new Set<string>();
  doc.descendants((node) => {
    if (node.type.name === 'image' && node.attrs.src) images.add(String(node.attrs.src));
    for (const mark of node.marks) if (mark.type.name === 'link' && mark.attrs.href) links.add(String(mark.attrs.href));
  });
  return { images: [...images], links: [...links] };
}

/**
 * Where the doc's images and links should point instead: an image whose
 * source maps to null is left out for its alt text (or nothing); sources
 * and targets not named stay as they are.
 */
export type ReferenceChanges = { images?: Record<string, string | null>; links?: Record<string, string> };

export function withReferencesChanged(doc: PMNode, changes: ReferenceChanges): PMNode {
  const images = changes.images ?? {};
  const links = changes.links ?? {};
  if (Object.keys(images).length === 0 && Object.keys(links).length === 0) return doc;
  const has = (map: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(map, key);
  const rewrite = (node: JSONNode): JSONNode[] => {
    const marks = (node.marks as JSONNode[] | undefined)?.map((mark) => {
      const href = String((mark.attrs as JSONNode | undefined)?.href ?? '');
      return mark.type === 'link' && has(links, href) ? { ...mark, attrs: { ...(mark.attrs as JSONNode), href: links[href] } } : mark;
    });
    const withMarks = marks ? { ...node, marks } : node;
    if (node.type === 'image') {
      const attrs = node.attrs as JSONNode;
      const src = String(attrs.src);
      if (!has(images, src)) return [withMarks];
      const next = images[src];
      if (next !== null) return [{ ...withMarks, attrs: { ...attrs, src: next } }];
      const alt = typeof attrs.alt === 'string' ? attrs.alt.trim() : '';
      return alt ? [{ type: 'text', text: `[${alt}]`, ...(marks ? { marks } : {}) }] : [];
    }
    const content = node.content as JSONNode[] | undefined;
    return [content ? { ...withMarks, content: content.flatMap(rewrite) } : withMarks];
  };
  return docFromJSON(fillEmptyBlocks(rewrite(doc.toJSON() as JSONNode)[0]!));
}

/** A textblock may hold nothing, but a block that must hold a block (a cell, a quote) gets an empty paragraph. */
function fillEmptyBlocks(node: JSONNode): JSONNode {
  const content = node.content as JSONNode[] | undefined;
  if (!content) return node;
  const filled = content.map(fillEmptyBlocks);
  const needsBlock = ['doc', 'tableCell', 'tableHeader', 'blockquote'].includes(String(node.type));
  return { ...node, content: filled.length === 0 && needsBlock ? [{ type: 'paragraph' }] : filled };
}
