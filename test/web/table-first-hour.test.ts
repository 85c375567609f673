import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { latestInviteToken } from '../members/fixtures';
import { createWorkspace } from '../workspaces/helpers';
import { launchBrowser, SCREENSHOT_DIR, sessionCookieOf, signedInPerson, type Person } from './browser';

/**
 * A new team's first hour with a table (issue 34): the owner and the editor
 * she invites, in two browsers. Sort and filter on any table, each person's
 * own until saved as a view; surfaces named as they are made, with addresses
 * that follow the name; new select options typed into a cell; a frozen first
 * column; a board that fits a laptop screen.
 */
describe('the table surface for an owner and an invited editor', () => {
  let t: TestApp;
  let browser: Browser;
  let ann: Person;
  let ben: Person;
  let annCookie: string;
  let workspace: { id: string; slug: string; org: { slug: string } };
  let path: string;
  let api: string;
  const rows: Record<string, string> = {};
  const consoleErrors: string[] = [];

  const titles = (person: Person) => person.page.locator('.grid-row [data-key="title"] .cell-content').allTextContents();
  const tab = (person: Person, name: string) => person.page.getByRole('tab', { name, exact: true });
  const headerMenu = (person: Person, label: string) => person.page.locator('.grid-header-cell', { hasText: label }).locator('.header-button').click();
  const unsavedNote = (person: Person) => person.page.getByTestId('unsaved-query');
  const cell = (person: Person, rowId: string, key: string) => person.page.locator(`[data-row-id="${rowId}"] [data-key="${key}"]`);
  const rest = (method: string, suffix: string, body?: unknown) => t.request(method, `${api}${suffix}`, { as: { cookie: annCookie }, ...(body === undefined ? {} : { body }) });
  const openTable = async (person: Person, surfaceSlug = 'table') => {
    await person.page.goto(`${person.origin}${path}/${surfaceSlug}`);
    await person.page.locator('.grid-row').first().waitFor();
  };

  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchBrowser();
    ann = await signedInPerson(t, browser, 'ann@example.com');
    ben = await signedInPerson(t, browser, 'ben@example.com');
    for (const [name, page] of [['ann', ann.page], ['ben', ben.page]] as Array<[string, Page]>) {
      page.on('console', (message) => message.type() === 'error' && consoleErrors.push(`${name}: ${message.text()}`));
      page.on('pageerror', (error) => consoleErrors.push(`${name}: ${error.message}`));
    }
    annCookie = await sessionCookieOf(ann.context);
    workspace = await createWorkspace(t, { as: { cookie: annCookie } }, { name: 'Launch plan', slug: 'launch-plan' });
    path = `/${workspace.org.slug}/${workspace.slug}`;
    api = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;

    // Ann invites Ben as an editor; he accepts the mailed link in his browser.
    expect((await rest('POST', '/share', { email: 'ben@example.com', role: 'editor' })).status).toBe(200);
    await ben.page.goto(`${ben.origin}/invites/${await latestInviteToken(t, 'ben@example.com')}`);
    await ben.page.getByRole('button', { name: 'Accept invite' }).click();
    await ben.page.waitForURL((url) => url.pathname === path);

    // A wide table: more columns than a laptop screen shows.
    for (const column of [
      { key: 'owner', label: 'Owner', type: 'text' },
      { key: 'estimate', label: 'Estimate', type: 'number' },
      { key: 'due', label: 'Due', type: 'date' },
      { key: 'tags', label: 'Tags', type: 'select', options: [] },
      { key: 'done', label: 'Done', type: 'checkbox' },
      { key: 'budget', label: 'Budget', type: 'number' },
    ]) {
      expect((await rest('POST', '/columns', { column })).status).toBe(200);
    }
    for (const data of [
      { title: 'Write the announcement', status: 'doing', notes: 'Draft in the doc tab' },
      { title: 'Record the demo video', status: 'todo', owner: 'Ann', estimate: 3, done: true },
      { title: 'Book the launch call', status: 'done', notes: 'Thursday 10:00' },
      { title: 'Draft the FAQ', status: 'todo', owner: 'Ben', estimate: 12, done: false },
      { title: 'Plan the launch party' },
    ]) {
      const created = await rest('POST', '/rows', { data });
      expect(created.status).toBe(200);
      rows[data.title] = created.body.id;
    }
  }, 240_000);

  afterAll(async () => {
    await ann?.close();
    await ben?.close();
    await browser?.close();
    await t?.close();
  });

  const sheetOrder = ['Write the announcement', 'Record the demo video', 'Book the launch call', 'Draft the FAQ', 'Plan the launch party'];

  it('sorts and filters a table without views from a column menu and the toolbar: each person on their own, kept over a reload, saved as a view for everyone', async () => {
    for (const person of [ann, ben]) await openTable(person);
    expect(await ann.page.locator('.view-tab').count()).toBe(0);

    // Ann sorts from the Title column's menu; Ben's grid keeps the table's order.
    await headerMenu(ann, 'Title');
    await ann.page.getByRole('menuitem', { name: 'Sort descending' }).click();
    await expect.poll(() => titles(ann)).toEqual([...sheetOrder].sort().reverse());
    await expect.poll(() => unsavedNote(ann).textContent()).toContain('Sort not saved');
    expect(await ann.page.getByRole('button', { name: 'Sorted by 1' }).count()).toBe(1);

    // ... and filters from the Status column's menu, which opens the filter on that column.
    await headerMenu(ann, 'Status');
    await ann.page.getByRole('menuitem', { name: 'Filter by this column…' }).click();
    const filter = ann.page.getByRole('dialog', { name: 'Filter' });
    expect(await filter.getByLabel('Column', { exact: true }).inputValue()).toBe('status');
    await filter.getByLabel('Value', { exact: true }).selectOption({ label: 'To do' });
    await expect.poll(() => titles(ann)).toEqual(['Record the demo video', 'Draft the FAQ']);
    expect(await ann.page.getByTestId('row-count').textContent()).toBe('2 of 5 rows');
    await ann.page.keyboard.press('Escape');
    await expect.poll(() => unsavedNote(ann).textContent()).toContain('Filter and sort not saved');
    expect(await titles(ben)).toEqual(sheetOrder);
    expect(await unsavedNote(ben).count()).toBe(0);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-unsaved-query.png` });

    // A reload keeps it: it is Ann's current state of this table, on this device.
    await ann.page.reload();
    await ann.page.locator('.grid-row').first().waitFor();
    await expect.poll(() => titles(ann)).toEqual(['Record the demo video', 'Draft the FAQ']);
    expect(await unsavedNote(ann).textContent()).toContain('Filter and sort not saved');

    // Ben sorts his own way from the toolbar's Sort button; Ann's grid does not move.
    await ben.page.getByRole('button', { name: 'Sort', exact: true }).click();
    const sort = ben.page.getByRole('dialog', { name: 'Sort' });
    await sort.getByRole('button', { name: 'Add sort' }).click();
    await sort.getByLabel('Sort column').selectOption({ label: 'Title' });
    await expect.poll(() => titles(ben)).toEqual([...sheetOrder].sort());
    await ben.page.keyboard.press('Escape');
    expect(await titles(ann)).toEqual(['Record the demo video', 'Draft the FAQ']);

    // Ann saves hers as a view: everyone gets it; her grid shows the same rows, saved.
    await ann.page.getByRole('button', { name: 'Save as view' }).click();
    await ann.page.getByLabel('Name', { exact: true }).fill('To do');
    await ann.page.getByRole('button', { name: 'Save view' }).click();
    await expect.poll(() => tab(ann, 'To do').getAttribute('aria-selected')).toBe('true');
    expect(await unsavedNote(ann).count()).toBe(0);
    expect(await titles(ann)).toEqual(['Record the demo video', 'Draft the FAQ']);
    // The view is made in Ann's page and reaches the server with her update: ask until it is there.
    await expect
      .poll(async () => (await rest('GET', '/views')).body.views)
      .toMatchObject([{ name: 'To do', filter: { and: [{ column: 'status', op: 'eq', value: 'todo' }] }, sort: [{ column: 'title', direction: 'desc' }] }]);

    // Ben sees the view arrive without his grid changing; his own sort is still his, until he resets it.
    await expect.poll(() => tab(ben, 'To do').count()).toBe(1);
    expect(await tab(ben, 'All rows').getAttribute('aria-selected')).toBe('true');
    expect(await titles(ben)).toEqual([...sheetOrder].sort());
    await tab(ben, 'To do').click();
    await expect.poll(() => titles(ben)).toEqual(['Record the demo video', 'Draft the FAQ']);
    await tab(ben, 'All rows').click();
    await expect.poll(() => unsavedNote(ben).textContent()).toContain('Sort not saved');
    await ben.page.getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => titles(ben)).toEqual(sheetOrder);
    expect(await unsavedNote(ben).count()).toBe(0);

    // On a saved view, a change is Ann's own too until she updates the view for everyone.
    await headerMenu(ann, 'Title');
    await ann.page.getByRole('menuitem', { name: 'Sort ascending' }).click();
    await expect.poll(() => titles(ann)).toEqual(['Draft the FAQ', 'Record the demo video']);
    await tab(ben, 'To do').click();
    await expect.poll(() => titles(ben)).toEqual(['Record the demo video', 'Draft the FAQ']);
    await ann.page.getByRole('button', { name: 'Update view' }).click();
    await expect.poll(() => titles(ben)).toEqual(['Draft the FAQ', 'Record the demo video']);
    expect(await unsavedNote(ann).count()).toBe(0);
    for (const person of [ann, ben]) await tab(person, 'All rows').click();
  }, 120_000);

  it('names a new table as it is made; a rename moves its address, and the old address leads the editor to it', async () => {
    await ann.page.getByRole('button', { name: 'Add a surface' }).click();
    const focusWhenShown = await focusOfTheDialogFieldWhenItShows(ann.page);
    await ann.page.getByRole('menuitem', { name: 'New table' }).click();
    const naming = ann.page.getByRole('dialog', { name: 'New table' });
    expect(await naming.getByLabel('Name', { exact: true }).inputValue()).toBe('Table 2');
    // Keys typed the moment the dialog shows go into its field: it has the focus before it is painted.
    expect(await focusWhenShown()).toBe(true);
    // The suggestion is selected: typing replaces it.
    await ann.page.keyboard.type('Bug triage');
    await naming.getByRole('button', { name: 'Create', exact: true }).click();
    await ann.page.waitForURL((url) => url.pathname === `${path}/bug-triage`);
    await expect.poll(() => ann.page.getByRole('tab', { selected: true }).textContent()).toBe('Bug triage');

    // Ben opens the address Ann sent him.
    await ben.page.goto(`${ben.origin}${path}/bug-triage`);
    await expect.poll(() => ben.page.getByRole('tab', { selected: true }).textContent()).toBe('Bug triage');

    await ann.page.getByRole('button', { name: 'Options for Bug triage' }).click();
    await ann.page.getByRole('menuitem', { name: 'Rename…' }).click();
    await ann.page.getByLabel('Name', { exact: true }).fill('Incidents');
    await ann.page.getByRole('button', { name: 'Save' }).click();
    await ann.page.waitForURL((url) => url.pathname === `${path}/incidents`);

    // The address Ben holds still works: it opens the table under its new address.
    await ben.page.reload();
    await ben.page.waitForURL((url) => url.pathname === `${path}/incidents`);
    await expect.poll(() => ben.page.getByRole('tab', { selected: true }).textContent()).toBe('Incidents');
    // A link into it (a row, a comment) keeps what it points at.
    await ben.page.goto(`${ben.origin}${path}/bug-triage?row=nope`);
    await ben.page.waitForURL((url) => url.pathname === `${path}/incidents` && url.search === '?row=nope');
    const found = await rest('GET', '/surfaces/bug-triage');
    expect(found.body).toMatchObject({ slug: 'incidents', formerSlugs: ['bug-triage'], name: 'Incidents' });

    // A doc is named the same way.
    await ann.page.getByRole('button', { name: 'Add a surface' }).click();
    await ann.page.getByRole('menuitem', { name: 'New doc' }).click();
    await ann.page.getByRole('dialog', { name: 'New doc' }).getByLabel('Name', { exact: true }).fill('Meeting notes');
    await ann.page.keyboard.press('Enter');
    await ann.page.waitForURL((url) => url.pathname === `${path}/meeting-notes`);
    await expect.poll(() => ann.page.getByRole('tab', { selected: true }).textContent()).toBe('Meeting notes');
  }, 120_000);

  it('offers a value typed into a select or status cell as a new option, for everyone; options move up and down', async () => {
    for (const person of [ann, ben]) await openTable(person);
    await expect.poll(() => titles(ann)).toEqual(sheetOrder);

    // Tags has no options yet: typing one offers to create it.
    const row = rows['Draft the FAQ']!;
    await cell(ann, row, 'tags').click();
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('Urgent');
    const create = ann.page.getByRole('option', { name: 'Create Urgent' });
    await create.waitFor();
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('Press');
    await ann.page.getByRole('option', { name: 'Create Press' }).click();
    await ann.page.keyboard.press('Escape');
    await expect.poll(() => cell(ben, row, 'tags').locator('.pill').allTextContents()).toEqual(['Urgent', 'Press']);
    await expect.poll(async () => (await rest('GET', `/rows/${row}`)).body.data.tags).toEqual(['urgent', 'press']);

    // A status cell: a new value is created and picked in one go.
    const book = rows['Book the launch call']!;
    await cell(ann, book, 'status').click();
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('Blocked');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-new-option.png` });
    await ann.page.keyboard.press('Enter');
    await expect.poll(() => cell(ben, book, 'status').textContent()).toBe('Blocked');
    // An existing option is still picked by typing part of it, not created again.
    await cell(ann, rows['Plan the launch party']!, 'status').click();
    await ann.page.keyboard.press('Enter');
    await ann.page.keyboard.type('blo');
    await expect.poll(() => ann.page.locator('.cell-editor-choice .choice-item.is-active').textContent()).toBe('Blocked');
    await ann.page.keyboard.press('Escape');

    // The option list is vertical, and so are its move buttons.
    await headerMenu(ann, 'Status');
    await ann.page.getByRole('menuitem', { name: 'Edit options…' }).click();
    const dialog = ann.page.getByRole('dialog', { name: 'Options of Status' });
    expect(await dialog.getByRole('button', { name: 'Move To do up' }).isDisabled()).toBe(true);
    expect(await dialog.getByRole('button', { name: 'Move Blocked down' }).isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Move Blocked up' }).click();
    await dialog.getByRole('button', { name: 'Move To do down' }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    // The next test reads the lanes' order from the server: ask until Ann's change has reached it.
    await expect
      .poll(async () => {
        const columns = (await rest('GET', '/columns')).body.columns as Array<{ key: string; options?: Array<{ label: string }> }>;
        return columns.find((column) => column.key === 'status')!.options!.map((option) => option.label);
      })
      .toEqual(['Doing', 'To do', 'Blocked', 'Done']);
  }, 120_000);

  it('keeps the first column in sight when a wide table scrolls sideways', async () => {
    await openTable(ann);
    const scroller = ann.page.locator('.grid-scroll');
    const box = (await scroller.boundingBox())!;
    const width = await scroller.evaluate((element) => element.scrollWidth - element.clientWidth);
    expect(width).toBeGreaterThan(300);
    await scroller.evaluate((element) => (element.scrollLeft = element.scrollWidth));
    await expect.poll(() => ann.page.locator('.grid-header-cell', { hasText: 'Budget' }).evaluate((el) => el.getBoundingClientRect().right)).toBeLessThanOrEqual(box.x + box.width);

    // The titles and their header stay right of the gutter, on top of the columns scrolled under them.
    const title = cell(ann, rows['Draft the FAQ']!, 'title');
    const titleBox = (await title.boundingBox())!;
    expect(Math.round(titleBox.x)).toBe(Math.round(box.x + 60));
    expect(Math.round((await ann.page.locator('.grid-header-cell', { hasText: 'Title' }).boundingBox())!.x)).toBe(Math.round(box.x + 60));
    const onTop = await ann.page.evaluate(([x, y]) => document.elementFromPoint(x!, y!)?.closest('[data-key]')?.getAttribute('data-key'), [titleBox.x + 20, titleBox.y + titleBox.height / 2]);
    expect(onTop).toBe('title');
    expect((await cell(ann, rows['Draft the FAQ']!, 'status').boundingBox())!.x).toBeLessThan(box.x + 60);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-frozen-column.png` });

    // Moving to a cell hidden under the frozen column brings it out from under it.
    await cell(ann, rows['Draft the FAQ']!, 'budget').click();
    await ann.page.keyboard.press('Home');
    await ann.page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await cell(ann, rows['Draft the FAQ']!, 'status').boundingBox())!.x).toBeGreaterThanOrEqual(titleBox.x + titleBox.width - 1);
  }, 120_000);

  it('a board fits a 1366 px screen: lanes scroll sideways, "No value" comes last and only while it holds cards, card fields line up', async () => {
    for (const person of [ann, ben]) {
      await person.page.setViewportSize({ width: 1366, height: 768 });
      await openTable(person);
    }
    await ann.page.getByRole('button', { name: 'New view' }).click();
    await ann.page.locator('.type-choice', { hasText: 'Board' }).click();
    await ann.page.getByLabel('Lanes from').selectOption({ label: 'Status' });
    await ann.page.getByLabel('Name', { exact: true }).fill('Board');
    await ann.page.getByRole('button', { name: 'Create view' }).click();
    await tab(ben, 'Board').click();
    // The lanes: the status options in their order, then the one row without a status.
    const options = async () => ((await rest('GET', '/columns')).body.columns as Array<{ key: string; options?: Array<{ label: string }> }>).find((c) => c.key === 'status')!.options!.map((o) => o.label);
    const lanes = (person: Person) => person.page.locator('.board-lane').evaluateAll((elements) => elements.map((element) => element.getAttribute('aria-label')));
    const statuses = await options();
    for (const person of [ann, ben]) await expect.poll(() => person.page.locator('.board-card').count()).toBe(5);

    // Every lane can be reached: the board scrolls sideways, and the last lane shows whole at the end.
    const board = ann.page.locator('.board');
    expect(await board.evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
    await board.evaluate((element) => (element.scrollLeft = element.scrollWidth));
    const boardBox = (await board.boundingBox())!;
    const lastLane = (await ann.page.locator('.board-lane').last().boundingBox())!;
    expect(lastLane.x + lastLane.width).toBeLessThanOrEqual(Math.min(boardBox.x + boardBox.width, 1366));
    expect(lastLane.x).toBeGreaterThanOrEqual(boardBox.x);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-board-scrolled.png` });

    // Labels in one column and values in the next, the same for text, numbers and check boxes.
    const card = ann.page.locator('.board-card', { hasText: 'Record the demo video' });
    const labels = await card.locator('.board-card-label').evaluateAll((elements) => elements.map((element) => [element.textContent, Math.round(element.getBoundingClientRect().left)]));
    const values = await card.locator('.board-card-value').evaluateAll((elements) => elements.map((element) => [element.textContent, Math.round(element.getBoundingClientRect().left)]));
    expect(labels.map(([text]) => text)).toEqual(['Owner', 'Estimate', 'Done']);
    expect(values.map(([text]) => text)).toEqual(['Ann', '3', 'Yes']);
    expect(new Set(labels.map(([, left]) => left)).size).toBe(1);
    expect(new Set(values.map(([, left]) => left)).size).toBe(1);
    const valueText = await card.locator('.board-card-value .cell-number').evaluate((element) => element.getBoundingClientRect().left);
    expect(Math.round(valueText)).toBe(values[0]![1]);

    for (const person of [ann, ben]) expect(await lanes(person)).toEqual([...statuses, 'No value']);
    expect(await ann.page.locator('.board-lane[data-lane=""] .board-card-title').allTextContents()).toEqual(['Plan the launch party']);

    // Once every row has a status, the empty "No value" lane goes away; four lanes fit a 1366 px screen whole, with no scrolling.
    expect((await rest('PATCH', `/rows/${rows['Plan the launch party']}`, { data: { status: 'done' } })).status).toBe(200);
    for (const person of [ann, ben]) await expect.poll(() => lanes(person)).toEqual(statuses);
    await board.evaluate((element) => (element.scrollLeft = 0));
    const fourLanes = ann.page.locator('.board-lane');
    expect(await fourLanes.count()).toBe(4);
    expect(await board.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true);
    expect(await fourLanes.last().evaluate((element) => element.getBoundingClientRect().right)).toBeLessThanOrEqual(1366);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}table-board.png` });
  }, 120_000);

  it('shows no console error in either browser during the whole flow', () => {
    expect(consoleErrors).toEqual([]);
  });
});

/**
 * Whether a dialog's first field held the focus in the very task that put the
 * dialog on the page (a mutation observer's callback runs before anything is
 * painted or any key can reach the page): a person typing at once types into it.
 * Watches from now; the answer is read once the dialog shows.
 */
async function focusOfTheDialogFieldWhenItShows(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => {
    const watched = window as unknown as { dialogFieldFocused?: Promise<boolean> };
    watched.dialogFieldFocused = new Promise<boolean>((resolve) => {
      const observer = new MutationObserver(() => {
        const field = document.querySelector('[role="dialog"] input');
        if (!field) return;
        observer.disconnect();
        resolve(document.activeElement === field);
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
  });
  return () => page.evaluate(() => (window as unknown as { dialogFieldFocused: Promise<boolean> }).dialogFieldFocused);
}
