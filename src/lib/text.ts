/**
 * Text that Postgres can store. JavaScript strings may hold lone UTF-16
 * surrogates (`JSON.parse('"\\ud800"')` makes one) and U+0000; Postgres
 * refuses both in `text` and `jsonb` (22P02, 22021, "unsupported Unicode
 * escape sequence"). Every entrance (HTTP bodies and query strings, sync
 * updates) and every projection write passes text through here, so that a
 * write can never fail for its characters: each such code unit becomes
 * U+FFFD, the Unicode replacement character, as a UTF-8 decoder would do.
 *
 * Identifiers with a pattern (slugs) then fail their own validation with a
 * 422; free text keeps the replacement character.
 */

export const REPLACEMENT_CHARACTER = '\uFFFD';

/** The second half of a UTF-16 surrogate pair: a cut before it splits a character. */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Deeper JSON than this is refused at the HTTP entrance (400): no route takes anything near it. */
export const MAX_JSON_DEPTH = 128;

/** True when `text` needs `storableText` (cheap: a native check and a search). */
export function needsRepair(text: string): boolean {
  return !text.isWellFormed() || text.includes('\u0000');
}

/** `text` with lone surrogates and U+0000 replaced by U+FFFD; the same string when nothing needs it. */
export function storableText(text: string): string {
  if (!needsRepair(text)) return text;
  return text.toWellFormed().replaceAll('\u0000', REPLACEMENT_CHARACTER);
}

export class TooDeepError extends Error {
  constructor() {
    super(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    this.name = 'TooDeepError';
  }
}

/**
 * A JSON-shaped value with every string and object key made storable.
 * Returns the same value (no copy) when nothing needed repair, which is the
 * common case. Keys are copied with `defineProperty`, so a `__proto__` key
 * stays an own property and never touches a prototype. Throws
 * `TooDeepError` past `maxDepth` (iteratively, so hostile nesting cannot
 * overflow the stack).
 */
export function storableJson<T>(value: T, maxDepth = Number.POSITIVE_INFINITY): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (!containsRepairable(value, maxDepth)) return value;
  return repair(value) as T;
}

function containsRepairable(root: object, maxDepth: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 1 }];
  let found = false;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (needsRepair(value)) found = true;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > maxDepth) throw new TooDeepError();
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    for (const key of Object.keys(value)) {
      if (needsRepair(key)) found = true;
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
  return found;
}

function repair(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(repair);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, storableText(key), {
      value: repair((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
