import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { addMembership, createWorkspace } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/** Saved views of a table in the browser (issue 24): two editors and a viewer, live. */
describe('table views in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let cat: Person;
  let annCookie: string;
  let workspace: { id: string; slug: string; org: { slug: string } };
  let path: string;
  const rows: Record<string, string> = {};

  const titles = (person: Person) => person.page.locator('.grid-row [data-key="title"] .cell-content').allTextContents();
  const headers = (person: Person) => person.page.locator('.grid-header-cell .header-label').allTextContents();
  const tab = (person: Person, name: string) => person.page.getByRole('tab', { name, exact: true });
  const rowOverRest = async (rowId: string) => (await t.request('GET', `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}/rows/${rowId}`, { as: { cookie: annCookie } })).body;

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    ben = await signedInPerson(t, browser, 'ben@example.com');
    cat = await signedInPerson(t, browser, 'cat@example.com');
    annCookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch plan', slug: 'launch-plan' });
    for (const [email, role] of [
      ['ben@example.com', 'editor'],
      ['cat@example.com', 'viewer'],
    ] as const) {
      const user = await t.services.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
      await addMembership(t, workspace.id, user.id, role);
    }
    const seed = [
      { title: 'Write the announcement', status: 'doing', notes: 'Draft in the doc tab' },
      { title: 'Record the demo video', status: 'todo', notes: '' },
      { title: 'Book the launch call', status: 'done', notes: 'Thursday 10:00' },
      { title: 'Draft the FAQ', status: 'todo', notes: 'Ask support' },
    ];
    for (const data of seed) {
      const created = await t.request('POST', `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}/rows`, { as: { cookie: annCookie }, body: { data } });
      expect(created.status).toBe(200);
      rows[data.title] = created.body.id;
    }
    path = `/${workspace.org.slug}/${workspace.slug}`;
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await ben?.close();
    await cat?.close();
    await browser?.close();
    await t?.close();
  });

  it('opens as the plain grid while the table has no views', async () => {
    for (const person of [ann, ben, cat]) {
      await person.page.goto(person.origin + path);
      await person.page.waitForSelector('.grid-row');
      await expect.poll(() => person.page.getByTestId('row-count').textContent()).toBe('4 rows');
    }
    expect(await ann.page.locator('.view-tab').count()).toBe(0);
    // Only editors make views: a viewer has no view bar at all while there are none.
    expect(await cat.page.getByRole('button', { name: 'New view' }).count()).toBe(0);
  });

  it('creates a view with a filter from the builder: only matching rows show, the others see the view appear live, and its filter once it is saved', async () => {
    await ann.page.getByRole('button', { name: 'New view' }).click();
    await ann.page.getByLabel('Name').fill('Open work');
    await ann.page.getByRole('button', { name: 'Create view' }).click();
    await expect.poll(() => tab(ann, 'Open work').getAttribute('aria-selected')).toBe('true');

    await ann.page.getByRole('button', { name: 'Filter' }).click();
    const filter = ann.page.getByRole('dialog', { name: 'Filter' });
    await filter.getByRole('button', { name: 'Add condition' }).click();
    await filter.getByLabel('Column', { exact: true }).selectOption({ label: 'Status' });
    await filter.getByLabel('Operator', { exact: true }).selectOption({ label: 'is not' });
    // Until a value is chosen the condition says nothing, and every row still shows.
    expect((await titles(ann)).length).toBe(4);
    await filter.getByLabel('Value', { exact: true }).selectOption({ label: 'Done' });
    await expect.poll(async () => (await titles(ann)).sort()).toEqual(['Draft the FAQ', 'Record the demo video', 'Write the announcement']);
    expect(await ann.page.getByTestId('row-count').textContent()).toBe('3 of 4 rows');

    // Ben's switcher shows the new view at once; his grid stays where he was until he picks it, and the filter is Ann's own until she saves it.
    await expect.poll(() => tab(ben, 'Open work').count()).toBe(1);
    expect(await tab(ben, 'All rows').getAttribute('aria-selected')).toBe('true');
    expect((await titles(ben)).length).toBe(4);
    await tab(ben, 'Open work').click();
    await expect.poll(async () => (await titles(ben)).length).toBe(4);

    // A second condition joined by "and", then "or", and a sort.
    await filter.getByRole('button', { name: 'Add condition' }).click();
    await filter.getByLabel('Column', { exact: true }).nth(1).selectOption({ label: 'Title' });
    await filter.getByLabel('Operator', { exact: true }).nth(1).selectOption({ label: 'contains' });
    await filter.getByLabel('Value', { exact: true }).nth(1).fill('the');
    await expect.poll(async () => (await titles(ann)).sort()).toEqual(['Draft the FAQ', 'Record the demo video', 'Write the announcement']);
    await filter.getByLabel('Value', { exact: true }).nth(1).fill('draft');
    await expect.poll(() => titles(ann)).toEqual(['Draft the FAQ']);
    await filter.getByLabel('Join conditions with').selectOption('or');
    await expect.poll(async () => (await titles(ann)).sort()).toEqual(['Draft the FAQ', 'Record the demo video', 'Write the announcement']);
    await ann.page.keyboard.press('Escape');

    await ann.page.getByRole('button', { name: 'Sort' }).click();
    const sort = ann.page.getByRole('dialog', { name: 'Sort' });
    await sort.getByRole('button', { name: 'Add sort' }).click();
    await sort.getByLabel('Sort column').selectOption({ label: 'Title' });
    await sort.getByLabel('Direction').selectOption({ label: 'descending' });
    await expect.poll(() => titles(ann)).toEqual(['Write the announcement', 'Record the demo video', 'Draft the FAQ']);
    await ann.page.keyboard.press('Escape');
    await expect.poll(() => ann.page.getByRole('button', { name: 'Filtered by 2' }).count()).toBe(1);
    expect((await titles(ben)).length).toBe(4);

    // Saved into the view: Ben's grid follows.
    await ann.page.getByRole('button', { name: 'Update view' }).click();
    await expect.poll(() => titles(ben)).toEqual(['Write the announcement', 'Record the demo video', 'Draft the FAQ']);

    // A change made elsewhere (over REST, as an agent makes it) re-derives the open views: the row leaves them, and comes back.
    const patch = (status: string) =>
      t.request('PATCH', `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}/rows/${rows['Write the announcement']}`, { as: { cookie: annCookie }, body: { data: { status } } });
    expect((await patch('done')).status).toBe(200);
    for (const person of [ann, ben]) await expect.poll(() => titles(person)).toEqual(['Record the demo video', 'Draft the FAQ']);
    expect((await patch('doing')).status).toBe(200);
    for (const person of [ann, ben]) await expect.poll(() => titles(person)).toEqual(['Write the announcement', 'Record the demo video', 'Draft the FAQ']);
  });

  it('hides and reorders columns and sets the row height in the view only', async () => {
    await ann.page.getByRole('button', { name: 'Fields' }).click();
    const fields = ann.page.getByRole('dialog', { name: 'Fields' });
    await fields.getByRole('checkbox', { name: 'Notes' }).uncheck();
    await expect.poll(() => headers(ann)).toEqual(['Title', 'Status']);
    await expect.poll(() => headers(ben)).toEqual(['Title', 'Status']);
    await fields.getByRole('button', { name: 'Move Status up' }).click();
    await expect.poll(() => headers(ben)).toEqual(['Status', 'Title']);
    await fields.getByRole('radio', { name: 'Tall', exact: true }).click();
    await expect.poll(() => ben.page.locator('.grid-row').first().evaluate((row) => row.getBoundingClientRect().height)).toBe(92);
    await ann.page.keyboard.press('Escape');
    expect(await ann.page.getByRole('button', { name: '1 hidden' }).count()).toBe(1);

    // The sheet itself is untouched: the plain grid and REST still have every column, in its order.
    await tab(ann, 'All rows').click();
    await expect.poll(() => headers(ann)).toEqual(['Title', 'Status', 'Notes']);
    expect(await ann.page.locator('.grid-row').first().evaluate((row) => row.getBoundingClientRect().height)).toBe(36);
    const columns = await t.request('GET', `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}/columns`, { as: { cookie: annCookie } });
    expect(columns.body.columns.map((c: { key: string; hidden?: boolean }) => [c.key, Boolean(c.hidden)])).toEqual([
      ['title', false],
      ['status', false],
      ['notes', false],
    ]);
  });

  it('board: dragging a card to another lane changes the cell, as REST reads it', async () => {
    await ann.page.getByRole('button', { name: 'New view' }).click();
    await ann.page.locator('.type-choice', { hasText: 'Board' }).click();
    await ann.page.getByLabel('Lanes from').selectOption({ label: 'Status' });
    await ann.page.getByLabel('Name').fill('Status board');
    await ann.page.getByRole('button', { name: 'Create view' }).click();
    await ann.page.waitForSelector('.board-lane');
    const lanes = ann.page.locator('.board-lane-header');
    // "No value" comes last, and only while a row has no value.
    await expect.poll(() => lanes.allTextContents()).toEqual(['To do2', 'Doing1', 'Done1']);
    const laneOf = (person: Person, value: string) => person.page.locator(`.board-lane[data-lane="${value}"]`);
    await expect.poll(() => laneOf(ann, 'todo').locator('.board-card-title').allTextContents()).toEqual(['Record the demo video', 'Draft the FAQ']);

    // Ben opens the board too, and sees the card move when Ann drops it.
    await tab(ben, 'Status board').click();
    await ben.page.waitForSelector('.board-card');
    await ann.page.locator('.board-card', { hasText: 'Record the demo video' }).dragTo(laneOf(ann, 'done'));
    await expect.poll(async () => (await rowOverRest(rows['Record the demo video']!)).data.status).toBe('done');
    await expect.poll(() => laneOf(ben, 'done').locator('.board-card-title').allTextContents()).toEqual(['Record the demo video', 'Book the launch call']);

    // The keyboard moves a focused card one lane over: past the last lane, into "No value", clears the cell.
    await ann.page.locator('.board-card', { hasText: 'Write the announcement' }).focus();
    await ann.page.keyboard.press('ArrowRight');
    await expect.poll(() => laneOf(ann, 'done').locator('.board-card:focus').textContent()).toContain('Write the announcement');
    await ann.page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await rowOverRest(rows['Write the announcement']!)).data.status ?? null).toBeNull();
    await expect.poll(() => laneOf(ben, '').locator('.board-card-title').allTextContents()).toEqual(['Write the announcement']);
    await expect.poll(() => lanes.allTextContents()).toEqual(['To do1', 'Doing0', 'Done2', 'No value1']);
    await ann.page.setViewportSize({ width: 1280, height: 720 });
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-board.png` });
  });

  it("remembers each person's current view after a reload; a viewer switches views and filters for herself, but does not change them", async () => {
    await ann.page.reload();
    await ann.page.waitForSelector('.board-lane');
    expect(await tab(ann, 'Status board').getAttribute('aria-selected')).toBe('true');
    await tab(ann, 'Open work').click();
    await ann.page.reload();
    await ann.page.waitForSelector('.grid-row');
    await expect.poll(() => tab(ann, 'Open work').getAttribute('aria-selected')).toBe('true');
    await ben.page.reload();
    await ben.page.waitForSelector('.board-lane');
    expect(await tab(ben, 'Status board').getAttribute('aria-selected')).toBe('true');

    // Cat has never picked one: she gets the first view, can switch, and narrows it for herself; she cannot save it.
    await cat.page.reload();
    await cat.page.waitForSelector('.grid-row');
    await expect.poll(() => tab(cat, 'Open work').getAttribute('aria-selected')).toBe('true');
    expect(await cat.page.getByRole('button', { name: 'New view' }).count()).toBe(0);
    const before = await titles(cat);
    await cat.page.getByRole('button', { name: 'Filtered by 2' }).click();
    const filter = cat.page.getByRole('dialog', { name: 'Filter' });
    await filter.getByRole('button', { name: 'Remove condition' }).first().click();
    await expect.poll(() => titles(cat)).toEqual(['Draft the FAQ']);
    await cat.page.keyboard.press('Escape');
    expect(await cat.page.getByTestId('unsaved-query').textContent()).toContain('Filter not saved');
    expect(await cat.page.getByRole('button', { name: 'Update view' }).count()).toBe(0);
    expect(await cat.page.getByRole('button', { name: 'Save as view' }).count()).toBe(0);
    expect(await titles(ann)).toEqual(before);
    await cat.page.getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => titles(cat)).toEqual(before);
    await tab(cat, 'Status board').click();
    await cat.page.waitForSelector('.board-lane');
    expect(await cat.page.locator('.board-card[draggable="true"]').count()).toBe(0);
  });

  it('renames and deletes views for everyone; whoever was on a deleted view lands on the first one', async () => {
    await ann.page.getByRole('button', { name: 'Open work options' }).click();
    await ann.page.getByRole('menuitem', { name: 'Rename…' }).click();
    await ann.page.getByLabel('View name').fill('Open tasks');
    await ann.page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => tab(ben, 'Open tasks').count()).toBe(1);

    await tab(ann, 'Status board').click();
    await ann.page.getByRole('button', { name: 'Status board options' }).click();
    await ann.page.getByRole('menuitem', { name: 'Delete view' }).click();
    await ann.page.getByRole('button', { name: 'Delete view' }).click();
    for (const person of [ann, ben]) {
      await expect.poll(() => person.page.locator('.view-tab').allTextContents()).toEqual(['All rows', 'Open tasks']);
      await expect.poll(() => tab(person, 'Open tasks').getAttribute('aria-selected')).toBe('true');
      await expect.poll(() => titles(person)).toEqual(['Write the announcement', 'Draft the FAQ']);
    }
  });

  it('the filter panel shows the saved conditions, by column, joined with or (screenshot for docs)', async () => {
    await ann.page.getByRole('button', { name: 'Filtered by 2' }).click();
    const panel = ann.page.getByRole('dialog', { name: 'Filter' });
    await panel.waitFor();
    const columns = await panel.getByRole('combobox', { name: 'Column' }).evaluateAll((selects) => selects.map((select) => (select as HTMLSelectElement).value));
    expect(columns).toHaveLength(2);
    expect(await panel.getByRole('combobox', { name: 'Join conditions with' }).inputValue()).toBe('or');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-views.png` });
    await ann.page.keyboard.press('Escape');
  });
});
