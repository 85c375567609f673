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

/** Replaces every section of one surface: the projection is rebuilt whole, never patched. */
export async function replaceDocSections(db: Executor, workspaceId: string, surfaceId: string, sections: readonly DocSectionRow[], now: Date) {
  await db.deleteFrom('docSections').where('surfaceId', '=', surfaceId).execute();
  // Chunked: Postgres allows 65,535 parameters per statement, a long doc can have thousands of headings.
  for (let from = 0; from < sections.length; from += INSERT_CHUNK) {
    await db
      .insertInto('docSections')
      .values(
        sections.slice(from, from + INSERT_CHUNK).map((s) => ({
          workspaceId,
          surfaceId,
          idx: s.index,
          heading: s.heading === null ? null : storableText(s.heading),
          level: s.level,
          text: storableText(s.text),
          updatedAt: now,
        })),
      )
      .execute();
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
