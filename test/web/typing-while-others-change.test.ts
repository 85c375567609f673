import { describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR } from './browser';
import { useTwoPeople } from './two-people';

/**
 * What a person types into a field whose value others can change stays
 * theirs while they type (docs/WEB.md "Typing while others change things"):
 * a change made by someone else at that moment draws the page again, and
 * must neither put the stored text back over the typing nor move the caret.
 * The colleague's change comes over REST while the keys are being pressed.
 */
describe('typing while someone else changes the table', () => {
  let viewId = '';
  const setup = useTwoPeople({ name: 'Typing', slug: 'typing' }, async (t, two) => {
    for (const title of ['One', 'Two', 'Three']) {
      expect((await t.request('POST', `${two.base}/rows`, { as: { cookie: two.annCookie }, body: { data: { title } } })).status).toBe(200);
    }
    const created = await t.request('POST', `${two.base}/views`, { as: { cookie: two.annCookie }, body: { name: 'With o', kind: 'grid', filter: { and: [{ column: 'title', op: 'contains', value: 'o' }] } } });
    expect(created.status, created.text).toBe(200);
    viewId = created.body.view.id;
  });
  const titles = (page = setup.two.ann.page) => page.locator('.grid-row [data-key="title"] .cell-content').allTextContents();

  it('a filter value being typed stays when a colleague saves another filter into the view, and becomes the typist’s unsaved filter', async () => {
    const { t, two } = setup;
    const { ann, ben, base, path } = two;
    for (const person of [ann, ben]) {
      await person.page.goto(person.origin + path);
      await person.page.getByRole('tab', { name: 'With o' }).click();
      await expect.poll(async () => (await titles(person.page)).sort()).toEqual(['One', 'Two']);
    }

    await ann.page.getByRole('button', { name: 'Filtered by 1' }).click();
    const value = ann.page.getByRole('dialog', { name: 'Filter' }).getByLabel('Value', { exact: true });
    await value.press('End');
    // Ben saves another filter into the view while Ann is typing hers: she goes on typing until his has reached
    // his own grid (through the server, as it reaches hers), and a little after.
    let typed = 'o';
    const key = async (char: string) => {
      await ann.page.keyboard.press(char === ' ' ? 'Space' : char);
      typed += char;
    };
    const bensGrid = () => ben.page.evaluate(() => [...document.querySelectorAll('.grid-row [data-key="title"] .cell-content')].map((cell) => cell.textContent).join('|'));
    await key('n');
    const saved = t.request('PATCH', `${base}/views/${viewId}`, { as: { cookie: two.benCookie }, body: { filter: { and: [{ column: 'title', op: 'contains', value: 'Thr' }] } } });
    for (let i = 0; (await bensGrid()) !== 'Three' && i < 400; i++) await key('e n'[i % 3]!);
    for (const char of ' of them') await key(char);
    expect((await saved).status).toBe(200);
    expect(await bensGrid()).toBe('Three');

    expect(await value.inputValue()).toBe(typed);
    expect(await value.evaluate((input: HTMLInputElement) => [input === document.activeElement, input.selectionStart])).toEqual([true, typed.length]);
    // Kept as Ann's own filter over the view (nothing matches it), not saved into the view; Ben's is the view's.
    await expect.poll(() => ann.page.getByTestId('unsaved-query').textContent()).toContain('Filter not saved');
    await expect.poll(() => titles()).toEqual([]);
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}/typing-filter-kept.png` });

    // Once Ann puts her filter aside, the view's own (Ben's) shows again.
    await ann.page.keyboard.press('Escape');
    await ann.page.getByTestId('unsaved-query').getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => titles()).toEqual(['Three']);
    expect(two.consoleErrors()).toEqual([]);
  }, 60_000);

  it('a colleague’s filter waits while the person sits in a value box, and shows once they leave it', async () => {
    const { t, two } = setup;
    const { ann, base } = two;
    // The view says "contains Thr", and Ann has no filter of her own over it.
    expect((await t.request('PATCH', `${base}/views/${viewId}`, { as: { cookie: two.benCookie }, body: { filter: { and: [{ column: 'title', op: 'contains', value: 'Thr' }] } } })).status).toBe(200);
    await ann.page.goto(ann.origin + two.path);
    await ann.page.getByRole('tab', { name: 'With o' }).click();
    if (await ann.page.getByTestId('unsaved-query').count()) await ann.page.getByTestId('unsaved-query').getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => titles()).toEqual(['Three']);
    await ann.page.getByRole('button', { name: 'Filtered by 1' }).click();
    const value = ann.page.getByRole('dialog', { name: 'Filter' }).getByLabel('Value', { exact: true });
    await value.click();
    await value.press('End');
    // Ann has clicked into the box to change the value when Ben saves another filter: the grid shows his, her box stays hers, with her caret in it.
    expect((await t.request('PATCH', `${base}/views/${viewId}`, { as: { cookie: two.benCookie }, body: { filter: { and: [{ column: 'title', op: 'contains', value: 'Tw' }] } } })).status).toBe(200);
    await expect.poll(() => titles()).toEqual(['Two']);
    expect(await value.inputValue()).toBe('Thr');
    await ann.page.keyboard.type('ee');
    expect(await value.inputValue()).toBe('Three');
    await expect.poll(() => ann.page.getByTestId('unsaved-query').textContent()).toContain('Filter not saved');
    await expect.poll(() => titles()).toEqual(['Three']);

    // Left as it is (back to what the view says), the next change from elsewhere shows in the box once she has left it.
    await value.fill('Tw');
    await expect.poll(() => ann.page.getByTestId('unsaved-query').count()).toBe(0);
    expect((await t.request('PATCH', `${base}/views/${viewId}`, { as: { cookie: two.benCookie }, body: { filter: { and: [{ column: 'title', op: 'contains', value: 'One' }] } } })).status).toBe(200);
    await expect.poll(() => titles()).toEqual(['One']);
    expect(await value.inputValue()).toBe('Tw');
    await value.press('Tab');
    await expect.poll(() => value.inputValue()).toBe('One');
    await ann.page.keyboard.press('Escape');
    expect(two.consoleErrors()).toEqual([]);
  }, 60_000);
});
