import { afterAll, beforeAll } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { latestInviteToken } from '../members/fixtures';
import { createWorkspace } from '../workspaces/helpers';
import { launchBrowser, sessionCookieOf, signedInPerson, type Person } from './browser';

/** Console errors and uncaught exceptions of a page, as they happen (a test asserts there were none). */
export function watchConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  // The app asks through its own dialogs: a native one is a bug.
  page.on('dialog', (dialog) => {
    errors.push(`native ${dialog.type()} dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return errors;
}

export interface TwoPeople {
  ann: Person;
  ben: Person;
  annCookie: string;
  benCookie: string;
  workspace: { id: string; slug: string; org: { slug: string }; primarySurface: { id: string; slug: string; syncDocument: string } };
  /** The workspace's canonical API path. */
  base: string;
  /** The workspace's page in the app (append `/{surface}`). */
  path: string;
  /** Console errors seen so far in either tab. */
  consoleErrors(): string[];
}

/**
 * The issue 34 flow: ann signs in and makes a workspace; ben signs in, ann
 * invites him as an editor through the share link and he accepts it (the
 * real invite, over HTTP, as his own session). Each has a browser context.
 */
export async function ownerAndInvitedEditor(t: TestApp, browser: Browser, workspaceBody: Record<string, unknown>): Promise<TwoPeople> {
  const [ann, ben] = await Promise.all(['ann@example.com', 'ben@example.com'].map((email) => signedInPerson(t, browser, email)));
  const errors = [watchConsoleErrors(ann.page), watchConsoleErrors(ben.page)];
  const [annCookie, benCookie] = await Promise.all([sessionCookieOf(ann.context), sessionCookieOf(ben.context)]);
  const workspace = await createWorkspace(t, { as: { cookie: annCookie } }, workspaceBody);
  const base = `/api/orgs/${workspace.org.slug}/workspaces/${workspace.slug}`;
  const shared = await t.request('POST', `${base}/share`, { as: { cookie: annCookie }, body: { email: 'ben@example.com', role: 'editor' } });
  if (shared.status !== 200) throw new Error(`POST /share answered ${shared.status}: ${shared.text}`);
  const accepted = await t.request('POST', `/api/invites/${await latestInviteToken(t, 'ben@example.com')}`, { as: { cookie: benCookie } });
  if (accepted.status !== 200) throw new Error(`accepting the invite answered ${accepted.status}: ${accepted.text}`);
  return { ann, ben, annCookie, benCookie, workspace, base, path: `/${workspace.org.slug}/${workspace.slug}`, consoleErrors: () => errors.flat() };
}

/**
 * One app, one Chromium and the two people for a test file: started before
 * its tests (then `prepare` runs, e.g. to write content and open pages),
 * closed after them. The fields are set once the file's tests run.
 */
export function useTwoPeople(workspaceBody: Record<string, unknown>, prepare?: (t: TestApp, two: TwoPeople) => Promise<void>): { t: TestApp; two: TwoPeople } {
  const context = {} as { t: TestApp; two: TwoPeople; browser: Browser };
  beforeAll(async () => {
    context.t = await startTestApp();
    context.browser = await launchBrowser();
    context.two = await ownerAndInvitedEditor(context.t, context.browser, workspaceBody);
    await prepare?.(context.t, context.two);
  }, 240_000);
  afterAll(async () => {
    await context.two?.ann.close();
    await context.two?.ben.close();
    await context.browser?.close();
    await context.t?.close();
  });
  return context;
}
