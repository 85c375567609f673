import { docSchema } from '../../src/model/doc/schema';
import type { Credential, TestApp, TestResponse } from '../helpers/app';

/** What the comment tests share: posting comments, reading the audit log, finding words in a doc. */

export async function expectStatus(res: TestResponse | Promise<TestResponse>, status: number): Promise<TestResponse> {
  const awaited = await res;
  if (awaited.status !== status) throw new Error(`expected ${status}, got ${awaited.status}: ${awaited.text}`);
  return awaited;
}

export function postComment(t: TestApp, as: Credential | undefined, slug: string, body: Record<string, unknown>) {
  return t.request('POST', `/api/workspaces/${slug}/comments`, { as, body });
}

/** Posts a comment and returns it, failing the test on anything but 200. */
export async function addComment(t: TestApp, as: Credential, slug: string, body: Record<string, unknown>) {
  return (await expectStatus(postComment(t, as, slug, body), 200)).body;
}

/** Audit-log records of one event name in a workspace, oldest first. */
export async function auditEvents(t: TestApp, workspaceId: string, event: string) {
  const rows = await t.services.db.selectFrom('events').select('record').where('workspaceId', '=', workspaceId).where('event', '=', event).orderBy('seq').execute();
  return rows.map((r) => (typeof r.record === 'string' ? JSON.parse(r.record) : r.record));
}

export async function countComments(t: TestApp) {
  return Number((await t.services.db.selectFrom('comments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
}

/**
 * The ProseMirror range of `words` in a doc body as `GET /doc` returns it
 * (positions count node boundaries, so they are found by walking the doc).
 */
export function rangeOf(content: unknown, words: string): { from: number; to: number } {
  const doc = docSchema.nodeFromJSON(content);
  let found: { from: number; to: number } | null = null;
  doc.descendants((node, pos) => {
    if (found || !node.isText) return !found;
    const at = node.text!.indexOf(words);
    if (at >= 0) found = { from: pos + at, to: pos + at + words.length };
    return false;
  });
  if (!found) throw new Error(`"${words}" not found in the doc`);
  return found;
}
