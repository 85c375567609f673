import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMember, as, person, wsPath, type Person } from '../members/fixtures';

/**
 * Read marks on a person's mentions (docs/COMMENTS.md "Read marks"): kept
 * by the server, so what was read in one browser is read in every other.
 */
describe('read marks on mentions', () => {
  let t: TestApp;
  let ann: Person;
  let cora: Person;
  const mentions: string[] = [];
  let plain: string;

  const mention = async (body: string) => {
    const posted = await t.request('POST', wsPath(ann, '/comments'), {
      as: as(ann),
      body: { target: { type: 'workspace' }, body: `@cora ${body}`, mentions: [{ kind: 'user', id: cora.userId, label: 'cora' }] },
    });
    expect(posted.status, posted.text).toBe(200);
    return posted.body as { id: string; createdAt: string };
  };
  const marksOf = async (who: Person) => (await t.request('GET', '/api/me/read-marks', { as: as(who) })).body;

  beforeAll(async () => {
    t = await startTestApp();
    ann = await person(t, 'ann@example.com');
    cora = await person(t, 'cora@example.com');
    await addMember(t, ann, cora, 'commenter');
    for (const body of ['first', 'second', 'third']) mentions.push((await mention(body)).id);
    const other = await t.request('POST', wsPath(ann, '/comments'), { as: as(ann), body: { target: { type: 'workspace' }, body: 'No mention here.' } });
    plain = other.body.id;
  }, 60_000);

  afterAll(async () => t?.close());

  it('starts with nothing read', async () => {
    expect(await marksOf(cora)).toEqual({ readThrough: null, commentIds: [] });
  });

  it('keeps a mention read one by one, for that person only, and ignores comments that do not mention them', async () => {
    const marked = await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { commentIds: [mentions[1], plain, 'cmt_unknown'] } });
    expect(marked.status, marked.text).toBe(200);
    expect(marked.body).toEqual({ readThrough: null, commentIds: [mentions[1]] });
    // Another browser of the same person reads the same marks.
    const elsewhere = await person(t, 'cora@example.com');
    expect(await marksOf(elsewhere)).toEqual({ readThrough: null, commentIds: [mentions[1]] });
    // Ann's marks are her own.
    expect(await marksOf(ann)).toEqual({ readThrough: null, commentIds: [] });
    // Marking it again changes nothing.
    expect((await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { commentIds: [mentions[1]] } })).body.commentIds).toEqual([mentions[1]]);
  });

  it('marks everything up to a time read, drops the single marks it covers, and never moves back or past now', async () => {
    const comments = (await t.request('GET', wsPath(ann, '/comments?mentioning=me&order=oldest'), { as: as(cora) })).body.comments as Array<{ id: string; createdAt: string }>;
    const second = comments.find((c) => c.id === mentions[1])!;
    const third = comments.find((c) => c.id === mentions[2])!;
    await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { commentIds: [mentions[2]] } });

    const through = await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { through: second.createdAt } });
    expect(through.status, through.text).toBe(200);
    expect(through.body).toEqual({ readThrough: second.createdAt, commentIds: [mentions[2]] });

    // Earlier than what is held: kept as it was.
    const back = await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { through: '2001-01-01T00:00:00.000Z' } });
    expect(back.body.readThrough).toBe(second.createdAt);
    // A mention the time already covers is not marked one by one.
    expect((await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { commentIds: [mentions[0]] } })).body.commentIds).toEqual([mentions[2]]);

    // The future is not read yet: the time stops at now.
    const future = await t.request('POST', '/api/me/read-marks', { as: as(cora), body: { through: '2999-01-01T00:00:00.000Z' } });
    expect(future.body.commentIds).toEqual([]);
    expect(Date.parse(future.body.readThrough)).toBeGreaterThanOrEqual(Date.parse(third.createdAt));
    expect(Date.parse(future.body.readThrough)).toBeLessThanOrEqual(Date.now());
    const later = await mention('fourth');
    expect(later.createdAt > future.body.readThrough).toBe(true);
  });

  it('refuses bad input with details, and changes nothing', async () => {
    const before = await marksOf(cora);
    const cases: Array<[unknown, number]> = [
      [{ commentIds: 'cmt_1' }, 400],
      [{ through: 'yesterday' }, 400],
      [{ commentIds: [], colour: 'red' }, 400],
      [{ commentIds: Array.from({ length: 101 }, (_, i) => `cmt_${i}`) }, 400],
    ];
    for (const [body, status] of cases) {
      const refused = await t.request('POST', '/api/me/read-marks', { as: as(cora), body });
      expect([status, 422], JSON.stringify(body)).toContain(refused.status);
      expect(refused.body.error.details.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    expect(await marksOf(cora)).toEqual(before);
    expect((await t.request('GET', '/api/me/read-marks')).status).toBe(401);
  });

  it('names the surface a comment sits on by its title as well as its slug', async () => {
    const table = await t.request('POST', wsPath(ann, '/surfaces'), { as: as(ann), body: { kind: 'table', slug: 'plan-b', name: 'Plan B' } });
    expect(table.status, table.text).toBe(200);
    const onSurface = await t.request('POST', wsPath(ann, '/comments'), { as: as(ann), body: { target: { type: 'surface', surfaceSlug: 'plan-b' }, body: 'On the sheet.' } });
    expect(onSurface.body).toMatchObject({ surfaceSlug: 'plan-b', surfaceName: 'Plan B' });
    const listed = await t.request('GET', wsPath(ann, '/comments?surface=plan-b'), { as: as(ann) });
    expect(listed.body.comments.map((c: { surfaceName: string }) => c.surfaceName)).toEqual(['Plan B']);
    const workspaceComment = (await t.request('GET', `/api/comments/${plain}`, { as: as(ann) })).body;
    expect(workspaceComment).toMatchObject({ surfaceSlug: null, surfaceName: null });
  });
});
