import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { isLowSurrogate, storableText } from '../lib/text';
import type { Executor } from './database';

/** The doc sections projection: the text under each top-level heading of a doc surface, for search. */

export type DocSectionRow = {
  /** Position of the section in the doc, from 0. */
  index: number;
  /** Heading text; null for the untitled content before the first heading. */
  heading: string | null;
  /** Heading level 1-6; 0 for the untitled section. */
  level: number;
  text: string;
};

const INSERT_CHUNK = 1000;

/** The seed of the surface's hash that names its projection's advisory lock (a number no other lock of the project uses). */
const SECTIONS_LOCK_SEED = 0x5ec7;

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/**
 * How much of the text before a part its searched text repeats, in UTF-16
 * units: an occurrence of a query that starts in the previous part and is
 * no longer than this lies whole in one part's searched text
 * (`searchedInParts`).
 */
export const PART_OVERLAP = 100;
/** The longest query looked for whole in the parts: under `PART_OVERLAP` by a margin. */
const PART_QUERY = PART_OVERLAP - 10;
/** A part's length, in UTF-16 units: no cut sooner than the first after the previous cut, and one by the second. */
const PART_MIN = 1024;
const PART_MAX = 4096;
/** How many characters before a whitespace decide whether the text is cut there. */
const CUT_WINDOW = 24;

const isWhitespace = (code: number) => code === 32 || code === 10 || code === 9 || code === 13;

/** FNV-1a of the `CUT_WINDOW` UTF-16 units before `end`. */
function windowHash(text: string, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = Math.max(0, end - CUT_WINDOW); i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** `at`, moved back one unit when it would fall between the two halves of a surrogate pair. */
function codePointBoundary(text: string, at: number): number {
  return at > 0 && isLowSurrogate(text.charCodeAt(at)) ? at - 1 : at;
}

/**
 * What of a query one part's searched text holds wherever the query is in
 * the section: the whole query up to 90 UTF-16 units, else its first 90
 * (never half a character), and search then matches the whole query
 * against the sections those parts belong to.
 */
export function searchedInParts(query: string): string {
  return query.length > PART_QUERY ? query.slice(0, codePointBoundary(query, PART_QUERY)) : query;
}

/**
 * A section's searched text (its heading, a newline, its text) in parts,
 * the rows of the trigram index. The text is cut after a whitespace whose
 * preceding 24 characters hash to a chosen value (one line end in 4, one
 * space in 128), at least 1 KB after the previous cut; with no such place
 * by 4 KB, after the last whitespace, or at 4 KB. A cut depends on the
 * text just before it, not on its offset, so typing changes the part it
 * lands in (and the next one's repeated start) and the parts after come
 * out the same: a projection writes what changed. Every part after the
 * first starts with the `PART_OVERLAP` characters before it.
 */
export function searchParts(heading: string | null, text: string): string[] {
  const head = `${heading ?? ''}\n`;
  const cuts: number[] = [0];
  let from = 0;
  while (text.length - from > PART_MAX) {
    let cut = -1;
    let lastSpace = -1;
    for (let at = from + PART_MIN; at <= from + PART_MAX; at++) {
      const code = text.charCodeAt(at - 1);
      if (!isWhitespace(code)) continue;
      lastSpace = at;
      if (windowHash(text, at) % (code === 10 ? 4 : 128) === 0) {
        cut = at;
        break;
      }
    }
    if (cut < 0) cut = lastSpace > 0 ? lastSpace : codePointBoundary(text, from + PART_MAX);
    cuts.push(cut);
    from = cut;
  }
  return cuts.map((start, i) => {
    const end = i + 1 < cuts.length ? cuts[i + 1]! : text.length;
    const before = i === 0 ? head : text.slice(codePointBoundary(text, Math.max(0, start - PART_OVERLAP)), start);
    return before + text.slice(start, end);
  });
}

/**
 * Sets the sections of one surface to `sections`, and their searched parts
 * (`searchParts`) to match. Only the section rows whose heading, level or
 * text differ are written again, and only the parts whose searched text is
 * new: each part is indexed by trigrams (doc_section_parts, migration
 * 0190), and a trigram insert of a whole long section held the embedded
 * database's serving thread 25-50 ms for every projection of a 100 KB doc
 * (docs/PERFORMANCE.md, issue 38 goal 2, sessions 10 and 24). Unchanged
 * rows only take `now` as their `updated_at`, as a rewrite gave them:
 * search reads the same rows either way. When no row differs, none is
 * written: the sections' text did not change since their time.
 *
 * Two commits of one doc can project at once (a sync client's update and a
 * REST write, or two instances): each would read the stored rows, then both
 * insert the section they found missing, and the second failed on the
 * primary key, so its write answered 500 and did not commit. A lock on the
 * surface for the rest of the transaction, taken before the read, has the
 * second wait and read what the first committed.
 *
 * `sections` may be a function, called once the lock is held: a projection
 * of a live document reads it then. Read before (when a sync client's
 * debounced projection fired, or when a REST write changed the doc), the
 * older reading could wait for the lock behind a newer one, commit after
 * it, and leave search with the older text until the next edit. Read under
 * the lock, each projection of an instance reads the document after the
 * one before it committed, so the last to commit read the newest state.
 */
export async function replaceDocSections(db: Executor, workspaceId: string, surfaceId: string, sections: readonly DocSectionRow[] | (() => readonly DocSectionRow[]), now: Date) {
  await sql`select pg_advisory_xact_lock(hashtextextended(${surfaceId}, ${SECTIONS_LOCK_SEED}))`.execute(db);
  const rows = (typeof sections === 'function' ? sections() : sections).map((s) => ({
    workspaceId,
    surfaceId,
    idx: s.index,
    heading: s.heading === null ? null : storableText(s.heading),
    level: s.level,
    text: storableText(s.text),
    updatedAt: now,
  }));
  // md5 in the database: the stored text is not read back, only its hash.
  const stored = await db
    .selectFrom('docSections')
    .select(['idx', 'workspaceId', 'heading', 'level', sql<string>`md5(text)`.as('hash')])
    .where('surfaceId', '=', surfaceId)
    .execute();
  const storedAt = new Map(stored.map((row) => [row.idx, row]));
  const unchanged: number[] = [];
  const written = rows.filter((row) => {
    const before = storedAt.get(row.idx);
    const same = before !== undefined && before.workspaceId === row.workspaceId && before.heading === row.heading && before.level === row.level && before.hash === md5(row.text);
    if (same) unchanged.push(row.idx);
    return !same;
  });
  // Every stored row is wanted as it is (a change of formatting only, a projection again of the same text): nothing is written, not even the time.
  if (written.length === 0 && unchanged.length === stored.length) return;
  // One array parameter, not one per section: a doc may keep more unchanged sections than a statement may have parameters.
  const kept = sql<number>`any(${`{${unchanged.join(',')}}`}::int[])`;
  if (unchanged.length < stored.length) {
    await db
      .deleteFrom('docSections')
      .where('surfaceId', '=', surfaceId)
      .where((eb) => eb.not(eb('idx', '=', kept)))
      .execute();
  }
  if (unchanged.length > 0) await db.updateTable('docSections').set({ updatedAt: now }).where('surfaceId', '=', surfaceId).where('idx', '=', kept).execute();
  // Chunked: Postgres allows 65,535 parameters per statement, a long doc can have thousands of headings.
  for (let from = 0; from < written.length; from += INSERT_CHUNK) {
    await db.insertInto('docSections').values(written.slice(from, from + INSERT_CHUNK)).execute();
  }
  await replaceSearchParts(db, workspaceId, surfaceId, rows, written);
}

/** The searched parts of `written` set to theirs; the parts of sections no longer in `rows` deleted; every other part kept. */
async function replaceSearchParts(db: Executor, workspaceId: string, surfaceId: string, rows: readonly DocSectionStored[], written: readonly DocSectionStored[]) {
  const storedParts = await db.selectFrom('docSectionParts').select(['idx', 'hash', 'workspaceId']).where('surfaceId', '=', surfaceId).execute();
  const wanted = new Map<string, { workspaceId: string; surfaceId: string; idx: number; hash: string; searchText: string }>();
  for (const row of written) {
    for (const searchText of searchParts(row.heading, row.text)) {
      const hash = md5(searchText);
      wanted.set(`${row.idx}:${hash}`, { workspaceId, surfaceId, idx: row.idx, hash, searchText });
    }
  }
  const rewritten = new Set(written.map((row) => row.idx));
  const present = new Set(rows.map((row) => row.idx));
  const gone = { idx: [] as number[], hash: [] as string[] };
  for (const part of storedParts) {
    const key = `${part.idx}:${part.hash}`;
    const keep = present.has(part.idx) && (!rewritten.has(part.idx) || (wanted.has(key) && part.workspaceId === workspaceId));
    if (keep) wanted.delete(key);
    else {
      gone.idx.push(part.idx);
      gone.hash.push(part.hash);
    }
  }
  if (gone.idx.length > 0) {
    await sql`delete from doc_section_parts where surface_id = ${surfaceId} and (idx, hash) in (select * from unnest(${gone.idx}::int[], ${gone.hash}::text[]))`.execute(db);
  }
  // A statement of at most PARTS_TEXT_PER_STATEMENT: the embedded database runs each in the serving thread, which
  // gets a turn between two statements (pglite-dialect.ts), and a trigram insert costs about 0.3 ms a KB there.
  const inserted = [...wanted.values()];
  let batch: typeof inserted = [];
  let batchText = 0;
  for (const part of inserted) {
    if (batch.length > 0 && (batchText + part.searchText.length > PARTS_TEXT_PER_STATEMENT || batch.length === INSERT_CHUNK)) {
      await db.insertInto('docSectionParts').values(batch).execute();
      batch = [];
      batchText = 0;
    }
    batch.push(part);
    batchText += part.searchText.length;
  }
  if (batch.length > 0) await db.insertInto('docSectionParts').values(batch).execute();
}

/**
 * The searched text one insert of parts holds at most (UTF-16 units): a
 * projection of a doc typed all over since the last (an agent's rewrite, a
 * paste, a typing trace replayed) indexes many parts, and in one statement
 * they held the embedded database's serving thread 28 ms (issue 38,
 * session 24). Four parts or so a statement.
 */
const PARTS_TEXT_PER_STATEMENT = 12 * 1024;

type DocSectionStored = { idx: number; heading: string | null; text: string };

export async function listDocSections(db: Executor, surfaceId: string): Promise<Array<DocSectionRow & { updatedAt: Date }>> {
  const rows = await db
    .selectFrom('docSections')
    .select(['idx', 'heading', 'level', 'text', 'updatedAt'])
    .where('surfaceId', '=', surfaceId)
    .orderBy('idx')
    .execute();
  return rows.map((r) => ({ index: r.idx, heading: r.heading, level: r.level, text: r.text, updatedAt: r.updatedAt }));
}
