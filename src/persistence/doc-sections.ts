import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { storableText } from '../lib/text';
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
 * Sets the sections of one surface to `sections`. Only the rows whose
 * heading, level or text differ are written again: each is indexed by
 * trigrams (search_text, migration 0040), so rewriting a long unchanged
 * section cost a trigram index insert of all its text, on the embedded
 * database's serving thread, every time any section of the doc changed
 * (docs/PERFORMANCE.md, issue 38 goal 2, session 10). Unchanged rows only
 * take `now` as their `updated_at`, as a rewrite gave them: search reads
 * the same rows either way. When no row differs, none is written: the
 * sections' text did not change since their time.
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
}

export async function listDocSections(db: Executor, surfaceId: string): Promise<Array<DocSectionRow & { updatedAt: Date }>> {
  const rows = await db
    .selectFrom('docSections')
    .select(['idx', 'heading', 'level', 'text', 'updatedAt'])
    .where('surfaceId', '=', surfaceId)
    .orderBy('idx')
    .execute();
  return rows.map((r) => ({ index: r.idx, heading: r.heading, level: r.level, text: r.text, updatedAt: r.updatedAt }));
}
