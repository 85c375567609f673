import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { eventually } from '../helpers/sync';
import { editorText, placeCaretIn, SCREENSHOT_DIR, type Person } from './browser';
import { useTwoPeople } from './two-people';

const POLL = { timeout: 20_000 };

/**
 * The doc surface in the issue 34 flow, ann (the owner) and ben (the editor
 * she invited) in two browsers: a click beside the text puts the caret in
 * it; the Authorship view keeps the doc's formatting; commented text is
 * highlighted and opens its thread; suggesting keeps the toolbar, and the
 * Suggestions button says what it is. No console error in either tab.
 */
describe('the doc, two people', () => {
  const app = useTwoPeople({ name: 'Launch', slug: 'launch', mode: 'doc' });

  /** A doc surface of its own per test, with `markdown` written by ann, open in both browsers. */
  async function openDoc(slug: string, markdown: string) {
    const { t, two } = app;
    const made = await t.request('POST', `${two.base}/surfaces`, { as: { cookie: two.annCookie }, body: { kind: 'doc', slug, name: slug } });
    expect(made.status, made.text).toBe(200);
    expect((await t.request('PUT', `${two.base}/doc?surface=${slug}`, { as: { cookie: two.annCookie }, body: { markdown } })).status).toBe(200);
    const firstLine = markdown.split('\n').find((line) => line.trim())!.replace(/^#+ /, '');
    for (const person of [two.ann, two.ben]) {
      await person.page.goto(`${person.origin}${two.path}/${slug}`);
      await person.page.locator('.ProseMirror', { hasText: firstLine }).waitFor({ timeout: 60_000 });
    }
  }
  const docText = async (slug: string, format: 'text' | 'markdown' = 'text', include = false) =>
    (await app.t.request('GET', `${app.two.base}/doc?surface=${slug}&format=${format}${include ? '&suggestions=include' : ''}`, { as: { cookie: app.two.annCookie } })).body[format] as string;
  const focusedInEditor = (page: Page) => page.evaluate(() => document.activeElement?.classList.contains('ProseMirror') ?? false);
  /** Waits until the browser's selection is inside the editor (ProseMirror hears of it through a queued event). */
  const caretInEditor = (person: Person) => expect.poll(() => person.page.evaluate(() => Boolean(document.querySelector('.ProseMirror')?.contains(window.getSelection()?.anchorNode ?? null))), POLL).toBe(true);

  it('puts the caret in the text when the blank area beside or below it is clicked, so typing lands there', async () => {
    await openDoc('blank', '# Notes\n\nFirst line.\n\nSecond line.');
    const { ann, ben } = app.two;
    expect(await focusedInEditor(ann.page)).toBe(false);
    // Beside the first line, in the margin right of the page.
    const line = await ann.page.locator('.ProseMirror p', { hasText: 'First line.' }).boundingBox();
    const scroller = await ann.page.locator('.doc-scroll').boundingBox();
    await ann.page.mouse.click(scroller!.x + scroller!.width - 20, line!.y + line!.height / 2);
    expect(await focusedInEditor(ann.page)).toBe(true);
    await caretInEditor(ann);
    await ann.page.keyboard.type(' Added beside.');
    await expect.poll(() => editorText(ann.page, 'p'), POLL).toBe('First line. Added beside.');

    // Below the text: the end of the doc.
    await ann.page.locator('.ProseMirror').evaluate((editor) => (editor as HTMLElement).blur());
    await ann.page.mouse.click(scroller!.x + scroller!.width / 2, scroller!.y + scroller!.height - 30);
    expect(await focusedInEditor(ann.page)).toBe(true);
    await caretInEditor(ann);
    await ann.page.keyboard.type(' And at the end.');
    await expect.poll(() => ben.page.locator('.ProseMirror p').last().innerText(), POLL).toBe('Second line. And at the end.');
    await eventually(async () => (await docText('blank')) === 'Notes\n\nFirst line. Added beside.\n\nSecond line. And at the end.', 10_000);
  }, 120_000);

  it('shows the doc by author with its formatting: heading sizes, bullets, bold', async () => {
    await openDoc('byline', '# Launch plan\n\nWe ship on **Thursday**.\n\n- Pricing page');
    const { ann, ben } = app.two;
    // Ben adds a bullet in his browser.
    await placeCaretIn(ben.page, '.ProseMirror li p');
    await ben.page.keyboard.press('End');
    await ben.page.keyboard.press('Enter');
    await ben.page.keyboard.type('Launch email by Ben');
    await eventually(async () => (await docText('byline')).includes('Launch email by Ben'), 10_000);

    await ann.page.getByRole('button', { name: 'Authorship' }).click();
    const view = ann.page.locator('.authorship .prose');
    await expect.poll(() => view.locator('li .authorship-span[data-author="ben"]').textContent(), POLL).toBe('Launch email by Ben');
    expect(await view.locator('h1 .authorship-span').getAttribute('data-author')).toBe('ann');
    expect(await view.locator('h1').textContent()).toBe('Launch plan');
    expect(await view.locator('strong').textContent()).toBe('Thursday');
    expect(await view.locator('ul > li').count()).toBe(2);
    const size = (selector: string) => view.locator(selector).first().evaluate((element) => parseFloat(getComputedStyle(element).fontSize));
    expect(await size('h1')).toBeGreaterThan((await size('p')) * 1.5);
    expect(await view.locator('strong').evaluate((element) => Number(getComputedStyle(element).fontWeight))).toBeGreaterThanOrEqual(600);
    expect(await view.locator('ul').evaluate((element) => getComputedStyle(element).listStyleType)).toBe('disc');
    // Tinted by author (a person's hue comes from their id, so two people may share one; the legend and the title tell them apart).
    const tint = (author: string) => view.locator(`.authorship-span[data-author="${author}"]`).first().evaluate((element) => getComputedStyle(element).backgroundColor);
    for (const author of ['ann', 'ben']) expect(await tint(author)).not.toBe('rgba(0, 0, 0, 0)');
    expect(await view.locator('li .authorship-span[data-author="ben"]').getAttribute('title')).toBe('ben');
    expect(await ann.page.locator('.authorship-legend li').allInnerTexts()).toEqual(expect.arrayContaining(['ann', 'ben']));
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}doc-authorship.png` });
    await ann.page.getByRole('button', { name: 'Authorship' }).click();
  }, 120_000);

  it('highlights commented text for everyone, and a click on the highlight opens the thread', async () => {
    await openDoc('review', 'We ship on Thursday after the demo.');
    const { ann, ben } = app.two;
    // Ben comments on "Thursday".
    await ben.page.locator('.ProseMirror p').evaluate((p) => {
      const text = p.firstChild!;
      const range = document.createRange();
      range.setStart(text, 'We ship on '.length);
      range.setEnd(text, 'We ship on Thursday'.length);
      window.getSelection()!.removeAllRanges();
      window.getSelection()!.addRange(range);
    });
    await ben.page.locator('.comment-bubble').click();
    const benPanel = ben.page.locator('aside.side-panel[aria-label="Comments"]');
    await benPanel.getByLabel('Add a comment').fill('Is Thursday firm?');
    await benPanel.getByRole('button', { name: 'Comment', exact: true }).click();
    await benPanel.locator('.thread .comment-body', { hasText: 'Is Thursday firm?' }).waitFor();

    // Ann, who has the doc open, sees the words highlighted without reloading; so does Ben.
    const annHighlight = ann.page.locator('.ProseMirror .comment-highlight');
    await expect.poll(() => annHighlight.textContent(), POLL).toBe('Thursday');
    await expect.poll(() => ben.page.locator('.ProseMirror .comment-highlight').textContent(), POLL).toBe('Thursday');
    expect(await annHighlight.evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe('rgba(0, 0, 0, 0)');
    await ann.page.screenshot({ path: `${SCREENSHOT_DIR}doc-comment-highlight.png` });

    // A click on it opens the comments with Ben's thread singled out.
    await annHighlight.click();
    const annPanel = ann.page.locator('aside.side-panel[aria-label="Comments"]');
    await expect.poll(() => annPanel.locator('.thread.is-highlighted .comment-body').textContent(), POLL).toBe('Is Thursday firm?');

    // The highlight follows the text as it is edited, and goes when the thread is resolved.
    await placeCaretIn(ann.page, '.ProseMirror p');
    await ann.page.keyboard.press('Home');
    await ann.page.keyboard.type('Plan: ');
    await expect.poll(() => editorText(ben.page, 'p'), POLL).toBe('Plan: We ship on Thursday after the demo.');
    expect(await annHighlight.textContent()).toBe('Thursday');
    // For Ben the edit is a peer's, which the editor receives as a new doc: the highlight stays on its word.
    expect(await ben.page.locator('.ProseMirror .comment-highlight').textContent()).toBe('Thursday');
    await annPanel.locator('.thread.is-highlighted').getByRole('button', { name: 'Resolve' }).click();
    await expect.poll(() => ben.page.locator('.ProseMirror .comment-highlight').count(), POLL).toBe(0);
    await expect.poll(() => annHighlight.count(), POLL).toBe(0);
    await ann.page.getByRole('button', { name: 'Close comments' }).click();
  }, 120_000);

  it('keeps the formatting toolbar while suggesting: text typed in bold is a bold suggestion; the Suggestions button is labelled with its count beside the icon', async () => {
    await openDoc('suggest', 'Launch on Thursday.');
    const { ann, ben } = app.two;
    await ben.page.locator('.doc-mode-toggle').click();
    await expect.poll(() => ben.page.locator('.doc-mode-toggle').getAttribute('aria-pressed')).toBe('true');
    const toolbar = ben.page.getByRole('toolbar', { name: 'Formatting' });
    const bold = toolbar.getByRole('button', { name: 'Bold (Ctrl+B)' });
    expect(await bold.isVisible()).toBe(true);
    // What a suggestion can hold is on offer; what it cannot is shown, disabled.
    await placeCaretIn(ben.page, '.ProseMirror p');
    await ben.page.keyboard.press('End');
    expect(await bold.isEnabled()).toBe(true);
    expect(await toolbar.getByRole('button', { name: 'Bulleted list' }).isDisabled()).toBe(true);
    expect(await toolbar.getByRole('button', { name: 'Text style' }).isDisabled()).toBe(true);
    // Someone else's text cannot be restyled by a suggestion.
    await ben.page.keyboard.press('Shift+Home');
    await expect.poll(() => bold.isDisabled()).toBe(true);
    await ben.page.keyboard.press('End');
    await expect.poll(() => bold.isEnabled()).toBe(true);

    await bold.click();
    await ben.page.keyboard.type(' urgent');
    const suggested = (person: Person) => person.page.locator('.ProseMirror ins.suggestion');
    await expect.poll(() => suggested(ann).locator('strong').textContent(), POLL).toBe(' urgent');
    await eventually(async () => /\{\+\+\*\*urgent\*\*\+\+\}|\*\*\{\+\+urgent\+\+\}\*\*|\{\+\+ \*\*urgent\*\*\+\+\}/.test(await docText('suggest', 'markdown', true)), 10_000);
    expect(await docText('suggest', 'markdown')).toBe('Launch on Thursday.\n');

    // The owner's Suggestions button: labelled, with a count that sits beside its icon.
    const button = ann.page.locator('.doc-suggestions-button');
    await expect.poll(() => button.innerText(), POLL).toMatch(/^Suggestions\s*1$/);
    const icon = (await button.locator('svg').boundingBox())!;
    const badge = (await button.locator('.count-badge').boundingBox())!;
    const label = (await button.getByText('Suggestions', { exact: true }).boundingBox())!;
    expect(label.x).toBeGreaterThanOrEqual(icon.x + icon.width);
    expect(badge.x).toBeGreaterThanOrEqual(label.x + label.width);
    await button.click();
    await expect.poll(() => ann.page.locator('.doc-suggestion').count(), POLL).toBe(1);
    expect(await ann.page.locator('.doc-suggestion').innerText()).toContain('ben');
    await ben.page.screenshot({ path: `${SCREENSHOT_DIR}doc-suggesting.png` });
  }, 120_000);

  it('shows no console error and no native dialog in either tab', () => {
    expect(app.two.consoleErrors()).toEqual([]);
  });
});
