import { markRead, readMarksOf } from '../domain/read-marks';
import { requireCaller } from '../access/callers';
import { MarkReadBody, ReadMarks } from '../model/schemas/comments';
import { defineOperation } from './operation';

/**
 * Read marks on the caller's mentions (docs/COMMENTS.md "Read marks"): the
 * web app's inbox reads and writes them, so a mention read on one device is
 * read on every other.
 */
export const readMarkOperations = {
  get: defineOperation(
    {
      response: ReadMarks,
      rest: {
        method: 'GET',
        path: '/api/me/read-marks',
        summary: 'What you have read of your mentions',
        description: 'A mention (a comment whose `mentions` name you) is read when it was created up to `readThrough`, or when its id is in `commentIds`.',
        tags: ['comments'],
      },
    },
    async (services, actor) => readMarksOf(services, requireCaller(actor)),
  ),
  mark: defineOperation(
    {
      body: MarkReadBody,
      response: ReadMarks,
      rest: {
        method: 'POST',
        path: '/api/me/read-marks',
        summary: 'Mark mentions read',
        description:
          '`commentIds`: comments that mention you, read one by one (others, and those `readThrough` already covers, are ignored). `through`: everything created up to then is read ("Mark all read"); it never moves back, nor past the present. Answers the marks as they now are.',
        tags: ['comments'],
      },
    },
    async (services, actor, { body }) => markRead(services, requireCaller(actor), body),
  ),
};
