/**
 * Mentions in a doc body, for `doc.mention_added`: that event fires only for
 * mentions a save introduces, so mentions are compared by identity (kind + id),
 * not by position or label. Browser-safe.
 */
import type { Node as PMNode } from 'prosemirror-model';
import type { MentionKind } from './schema.js';

export interface DocMention {
  kind: MentionKind;
  id: string;
  label: string;
}

export function mentionKey(m: Pick<DocMention, 'kind' | 'id'>): string {
  return `${m.kind}:${m.id}`;
}

/** Distinct mentions in document order; the first occurrence's label wins. */
export function extractMentions(node: PMNode): DocMention[] {
  const byKey = new Map<string, DocMention>();
  node.descendants((child) => {
    if (child.type.name !== 'mention') return true;
    const mention: DocMention = { kind: child.attrs.kind, id: String(child.attrs.id ?? ''), label: String(child.attrs.label ?? '') };
    if (mention.id !== '' && !byKey.has(mentionKey(mention))) byKey.set(mentionKey(mention), mention);
    return false;
  });
  return [...byKey.values()];
}

function mentionsOf(source: PMNode | readonly DocMention[] | null): readonly DocMention[] {
  if (source === null) return [];
  return Array.isArray(source) ? source : extractMentions(source as PMNode);
}

/** Mentions present in `after` whose kind + id were not in `before`. */
export function diffMentions(
  before: PMNode | readonly DocMention[] | null,
  after: PMNode | readonly DocMention[],
): DocMention[] {
  const known = new Set(mentionsOf(before).map(mentionKey));
  const added = new Map<string, DocMention>();
  for (const mention of mentionsOf(after)) {
    const key = mentionKey(mention);
    if (!known.has(key) && !added.has(key)) added.set(key, mention);
  }
  return [...added.values()];
}
