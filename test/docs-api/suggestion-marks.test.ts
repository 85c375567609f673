import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@example.com');
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

describe('suggestion marks in a plain write', () => {
  it('PUT /doc with a suggestInsert mark is 400 naming mode "suggest", and writes nothing', async () => {
    await createWorkspace(t, ada, { name: 'marks', slug: 'marks', mode: 'doc', initialMarkdown: 'Original.' });
    const attrs = { id: 'sg_forged', authorType: 'agent', authorId: 'ag_1', authorName: 'Someone else', at: '2026-11-26T19:00:00.000Z' };
    const content = {
      type: 'doc',
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Forged', marks: [{ type: 'suggestInsert', attrs }] }] }],
    };
    const res = await t.request('PUT', '/api/workspaces/marks/doc', { as: ada.as, body: { content } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { path: ['content', 'content', '0', 'content', '0', 'marks', '0', 'type'], code: 'invalid_content', message: expect.stringContaining('mode: "suggest"') },
    ]);
    const md = await t.request('GET', '/api/workspaces/marks/doc?format=markdown', { as: ada.as });
    expect(md.body.markdown).toBe('Original.\n');
  });
});
