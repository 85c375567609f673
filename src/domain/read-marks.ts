import type { Actor } from '../policy/actor';
import { advanceReadThrough, findReadMarks, insertReadMarks, pruneReadMarks } from '../persistence/read-marks';
import type { Services } from './services';

/**
 * Read marks on a person's inbox of mentions (docs/COMMENTS.md "Read
 * marks"): stored per principal, so what was read on one device is read on
 * every other. The web app assembles the inbox from each workspace's
 * `comments?mentioning=me`; these marks say which of them are read.
 */

export type ReadMarksView = { readThrough: string | null; commentIds: string[] };

/** Single marks kept per principal: the inbox lists at most 50 mentions, so older marks decide nothing. */
export const READ_MARKS_KEPT = 500;

export async function readMarksOf(services: Services, actor: Actor): Promise<ReadMarksView> {
  const state = await findReadMarks(services.db, actor.principal.id);
  return { readThrough: state.readThrough?.toISOString() ?? null, commentIds: state.commentIds };
}

/**
 * Marks comments read one by one, and/or everything up to `through` (never
 * later than now: a mention yet to come is not read). Comments that do not
 * mention the caller, or that `readThrough` already covers, are ignored.
 */
export async function markRead(services: Services, actor: Actor, input: { commentIds?: string[]; through?: string }): Promise<ReadMarksView> {
  const now = services.clock.now();
  const principalId = actor.principal.id;
  await services.db.transaction().execute(async (tx) => {
    if (input.through) await advanceReadThrough(tx, principalId, new Date(Math.min(Date.parse(input.through), now.getTime())));
    await insertReadMarks(tx, principalId, [...new Set(input.commentIds ?? [])], now);
    await pruneReadMarks(tx, principalId, READ_MARKS_KEPT);
  });
  return readMarksOf(services, actor);
}
