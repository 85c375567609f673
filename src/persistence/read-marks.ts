import { sql } from 'kysely';
import type { Executor } from './database';

/**
 * Read marks on a person's mentions inbox (migration 0091): a "read
 * through" time and the comments read one by one after it. Only comments
 * that mention the principal can be marked, so a mark never says whether
 * some other comment exists.
 */

export type ReadMarkState = { readThrough: Date | null; commentIds: string[] };

const mentioning = (principalId: string) => sql<boolean>`comments.mentions @> ${JSON.stringify([{ id: principalId }])}::jsonb`;

export async function findReadMarks(db: Executor, principalId: string): Promise<ReadMarkState> {
  const [through, marks] = await Promise.all([
    db.selectFrom('readThrough').select('readThrough').where('principalId', '=', principalId).executeTakeFirst(),
    db.selectFrom('readMarks').select('commentId').where('principalId', '=', principalId).orderBy('readAt', 'desc').orderBy('commentId').execute(),
  ]);
  return { readThrough: through?.readThrough ?? null, commentIds: marks.map((mark) => mark.commentId) };
}

/** Marks the comments that mention the principal and are newer than its read-through time; others are left alone. */
export async function insertReadMarks(db: Executor, principalId: string, commentIds: string[], at: Date): Promise<void> {
  if (commentIds.length === 0) return;
  await db
    .insertInto('readMarks')
    .columns(['principalId', 'commentId', 'readAt'])
    .expression((eb) =>
      eb
        .selectFrom('comments')
        .leftJoin('readThrough', (join) => join.on('readThrough.principalId', '=', principalId))
        .select([sql<string>`${principalId}::text`.as('principalId'), 'comments.id', sql<Date>`${at}::timestamptz`.as('readAt')])
        .where('comments.id', 'in', commentIds)
        .where(mentioning(principalId))
        .where((w) => w.or([w('readThrough.readThrough', 'is', null), w('comments.createdAt', '>', w.ref('readThrough.readThrough'))])),
    )
    .onConflict((oc) => oc.columns(['principalId', 'commentId']).doNothing())
    .execute();
}

/** Moves the read-through time forward (never back), and drops the single marks it now covers. */
export async function advanceReadThrough(db: Executor, principalId: string, through: Date): Promise<void> {
  await db
    .insertInto('readThrough')
    .values({ principalId, readThrough: through })
    .onConflict((oc) => oc.column('principalId').doUpdateSet({ readThrough: sql`greatest(read_through.read_through, excluded.read_through)` }))
    .execute();
  await db
    .deleteFrom('readMarks')
    .where('readMarks.principalId', '=', principalId)
    .where((w) =>
      w.exists(
        w
          .selectFrom('comments')
          .innerJoin('readThrough', 'readThrough.principalId', 'readMarks.principalId')
          .select('comments.id')
          .whereRef('comments.id', '=', 'readMarks.commentId')
          .whereRef('comments.createdAt', '<=', 'readThrough.readThrough'),
      ),
    )
    .execute();
}

/** Keeps a principal's newest `keep` single marks (the inbox shows far fewer); the rest are of no use. */
export async function pruneReadMarks(db: Executor, principalId: string, keep: number): Promise<void> {
  await db
    .deleteFrom('readMarks')
    .where('principalId', '=', principalId)
    .where(
      'commentId',
      'not in',
      db.selectFrom('readMarks').select('commentId').where('principalId', '=', principalId).orderBy('readAt', 'desc').orderBy('commentId').limit(keep),
    )
    .execute();
}
