import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { png, postMultipart } from '../files/helpers';
import { addMembership, createWorkspace } from '../workspaces/helpers';
import { launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * Calendar, timeline and gallery views in the browser (issue 37 items 1
 * and 2): dragging a calendar item moves its dates, dragging a timeline bar
 * moves it and dragging its end changes the end date, each reaching a
 * collaborator live and REST at once; rows without a date are listed
 * apart; a gallery card shows its cover image. No console errors.
 */
describe('calendar, timeline and gallery views in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let annCookie: string;
  let base: string;
  let path: string;
  const ids: Record<string, string> = {};
  const consoleErrors: string[] = [];

  const DAY = 86_400_000;
  const today = new Date(new Date().toISOString().slice(0, 10)).getTime();
  const day = (offset: number) => new Date(today + offset * DAY).toISOString().slice(0, 10);
  // Calendar rows on the 10th to the 12th of this month, which the calendar opens on.
  const month = new Date(today).toISOString().slice(0, 7);
  const rowOverRest = async (id: string) => (await t.request('GET', `${base}/rows/${id}`, { as: { cookie: annCookie } })).body;
  const tab = (person: Person, name: string) => person.page.getByRole('tab', { name, exact: true });
  const post = async (url: string, body: unknown) => {
    const res = await t.request('POST', `${base}${url}`, { as: { cookie: annCookie }, body });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@dates.test');
    ben = await signedInPerson(t, browser, 'ben@dates.test');
    for (const person of [ann, ben]) {
      person.page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
      person.page.on('pageerror', (error) => consoleErrors.push(error.message));
    }
    annCookie = await sessionCookieOf(ann.context);
    const workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Roadmap', slug: 'roadmap' });
    const benId = (await t.services.db.selectFrom('users').select('id').where('email', '=', 'ben@dates.test').executeTakeFirstOrThrow()).id;
    await addMembership(t, workspace.id, benId, 'editor');
    base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
    path = `/${workspace.org.slug}/${workspace.slug}`;
    for (const column of [
      { key: 'start', label: 'Start', type: 'date' },
      { key: 'end', label: 'End', type: 'date' },
      { key: 'photo', label: 'Photo', type: 'attachment' },
    ]) {
      await post('/columns', { column });
    }
    for (const [title, data] of [
      ['Kickoff', { start: `${month}-10`, end: `${month}-12`, status: 'todo' }],
      ['Shipped long ago', { start: `${month}-11`, status: 'done' }],
      ['Someday', { status: 'todo' }],
      ['Build', { start: day(2), end: day(4), status: 'doing' }],
    ] as const) {
      ids[title] = (await post('/rows', { data: { title, ...data } })).id;
    }
    await post('/views', { name: 'Calendar', kind: 'calendar', dateColumn: 'start', endDateColumn: 'end', filter: { and: [{ column: 'status', op: 'neq', value: 'done' }] } });
    await post('/views', { name: 'Timeline', kind: 'timeline', dateColumn: 'start', endDateColumn: 'end', groupBy: 'status' });
    await post('/views', { name: 'Gallery', kind: 'gallery', coverColumn: 'photo', cardFields: ['status'] });
    const upload = await postMultipart(t, `${base}/rows/${ids.Build}/attachments/photo`, [{ name: 'file', bytes: await png(120, 80), filename: 'build.png', type: 'image/png' }], { cookie: annCookie });
    expect(upload.status, upload.text).toBe(200);
    for (const person of [ann, ben]) {
      await person.page.goto(`${person.origin}${path}`);
      await person.page.waitForSelector('.view-tab');
    }
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await ben?.close();
    await browser?.close();
    await t?.close();
  });

  it('calendar: items on the days they span, the filter applies, undated rows apart; dragging an item moves both dates, live and over REST', async () => {
    for (const person of [ann, ben]) {
      await tab(person, 'Calendar').click();
      await person.page.waitForSelector('.calendar-day');
    }
    const itemsOn = (person: Person, date: string) => person.page.locator(`.calendar-day[data-day="${date}"] .calendar-item`).allTextContents();
    for (const date of ['10', '11', '12']) await expect.poll(() => itemsOn(ann, `${month}-${date}`)).toEqual(['Kickoff']);
    // The view's filter hides the done row; the row without a date is listed apart.
    expect(await ann.page.locator('.calendar-item', { hasText: 'Shipped long ago' }).count()).toBe(0);
    expect(await ann.page.getByRole('region', { name: 'No date' }).locator('.calendar-item').allTextContents()).toEqual(['Someday']);

    await ann.page.locator(`.calendar-day[data-day="${month}-10"] .calendar-item`, { hasText: 'Kickoff' }).dragTo(ann.page.locator(`.calendar-day[data-day="${month}-17"]`));
    await expect.poll(async () => (await rowOverRest(ids.Kickoff!)).data).toMatchObject({ start: `${month}-17`, end: `${month}-19` });
    await expect.poll(() => itemsOn(ben, `${month}-18`)).toEqual(['Kickoff']);
    await expect.poll(() => itemsOn(ben, `${month}-10`)).toEqual([]);

    // An undated row dropped on a day takes that day.
    await ann.page.getByRole('region', { name: 'No date' }).locator('.calendar-item', { hasText: 'Someday' }).dragTo(ann.page.locator(`.calendar-day[data-day="${month}-05"]`));
    await expect.poll(async () => (await rowOverRest(ids.Someday!)).data.start).toBe(`${month}-05`);

    // A week shows seven days.
    await ann.page.getByRole('button', { name: 'Week', exact: true }).click();
    await expect.poll(() => ann.page.locator('.calendar-day').count()).toBe(7);
    expect(consoleErrors).toEqual([]);
  });

  it('timeline: bars in lanes; dragging a bar moves it, dragging its end changes the end date, live and over REST; zoom changes the scale', async () => {
    for (const person of [ann, ben]) {
      await tab(person, 'Timeline').click();
      await person.page.waitForSelector('.timeline-bar');
    }
    const bar = (person: Person) => person.page.locator(`.timeline-bar[data-row-id="${ids.Build}"]`);
    expect(await ann.page.locator('.timeline-lane[data-lane="doing"] .timeline-bar-title').allTextContents()).toEqual(['Build']);
    const box = (await bar(ann).boundingBox())!;
    expect(box.width).toBeCloseTo(3 * 48, 0);
    // Two days later: 96 px at 48 px a day.
    await ann.page.mouse.move(box.x + 20, box.y + box.height / 2);
    await ann.page.mouse.down();
    await ann.page.mouse.move(box.x + 70, box.y + box.height / 2, { steps: 5 });
    await ann.page.mouse.move(box.x + 20 + 96, box.y + box.height / 2, { steps: 5 });
    await ann.page.mouse.up();
    await expect.poll(async () => (await rowOverRest(ids.Build!)).data).toMatchObject({ start: day(4), end: day(6) });
    await expect.poll(() => bar(ben).getAttribute('aria-label')).toBe(`Build: ${day(4)} to ${day(6)}`);

    // Its right end, one day further: only the end moves.
    const moved = (await bar(ann).boundingBox())!;
    await ann.page.mouse.move(moved.x + moved.width - 3, moved.y + moved.height / 2);
    await ann.page.mouse.down();
    await ann.page.mouse.move(moved.x + moved.width - 3 + 48, moved.y + moved.height / 2, { steps: 5 });
    await ann.page.mouse.up();
    await expect.poll(async () => (await rowOverRest(ids.Build!)).data).toMatchObject({ start: day(4), end: day(7) });
    await expect.poll(() => bar(ben).getAttribute('aria-label')).toBe(`Build: ${day(4)} to ${day(7)}`);

    await ann.page.getByRole('button', { name: 'Weeks' }).click();
    await expect.poll(async () => Math.round((await bar(ann).boundingBox())!.width)).toBe(4 * 16);
    expect(await ann.page.getByRole('region', { name: 'No date' }).locator('.calendar-item').allTextContents()).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('gallery: each row a card, the first image of the cover column its cover, the card fields under its title', async () => {
    await tab(ann, 'Gallery').click();
    const card = ann.page.locator(`.gallery-card[data-row-id="${ids.Build}"]`);
    await card.waitFor();
    const cover = card.locator('.gallery-cover img');
    await cover.waitFor();
    expect(await cover.getAttribute('src')).toMatch(/\/files\/fil_[^/]+\/thumb\?v=/);
    await expect.poll(() => cover.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    expect(await card.locator('.gallery-card-title').textContent()).toBe('Build');
    expect(await card.locator('.gallery-card-field[data-key="status"] dd').textContent()).toBe('Doing');
    // A card without a file has no cover image.
    expect(await ann.page.locator(`.gallery-card[data-row-id="${ids.Someday}"] .gallery-cover img`).count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });
});
