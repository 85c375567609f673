import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { capsFor } from '../../src/limits/plans';
import { ManualClock, startTestApp, type TestResponse } from '../helpers/app';
import { addWorkspaceWithRows } from '../billing/helpers';
import { png, postMultipart } from '../files/helpers';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';

/**
 * Public forms over HTTP (issue 37 item 3, docs/TABLES.md "Forms"): a form
 * view, opened, answers at its public link without an account; every column
 * type it may ask is read from JSON and from form posts and checked as a
 * REST write is; required fields, fields not on the form, a closed or
 * deleted form, the row cap, the per-address limit and the honeypot; the
 * row is created by the form, with its `row.created` event.
 */

const clock = new ManualClock();
let t: Awaited<ReturnType<typeof startTestApp>>;
let ada: TestUser;
const base = '/api/workspaces/club';
let form: { id: string; token: string; publicUrl: string };

function ok(res: TestResponse | { status: number; body: any; text: string }, status = 200) {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

const QUESTIONS = [
  { column: 'title', label: 'Your name', required: true, help: 'As on your passport' },
  { column: 'notes', required: false },
  { column: 'seats', required: false },
  { column: 'status', label: 'Level', required: false },
  { column: 'tags', required: false },
  { column: 'day', required: false },
  { column: 'site', required: false },
  { column: 'agree', label: 'I agree', required: false },
  { column: 'photo', required: false },
];

async function makeForm(slug: string, fields: unknown[], extra: Record<string, unknown> = {}) {
  const view = ok(
    await t.request('POST', `/api/workspaces/${slug}/views`, {
      as: ada.as,
      body: { name: 'Sign-up', kind: 'form', form: { title: 'Join the club', description: 'Tell us about you.', fields, successMessage: 'Welcome aboard!', open: true, ...extra } },
    }),
  ).view;
  expect(view.publicUrl).toMatch(/\/forms\/[A-Za-z0-9_-]{20,}$/);
  return { id: view.id as string, token: view.publicUrl.split('/forms/')[1] as string, publicUrl: view.publicUrl as string };
}

const submit = (token: string, body: unknown) => t.request('POST', `/api/forms/${token}`, { body });
const postForm = (token: string, body: string, accept = 'text/html') =>
  fetch(`${t.url}/forms/${token}`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', accept }, redirect: 'manual' });
const rowsOf = async (slug = 'club') => ok(await t.request('GET', `/api/workspaces/${slug}/rows?limit=500`, { as: ada.as })).rows as Array<{ id: string; data: Record<string, unknown>; createdByPrincipalId: string }>;

beforeAll(async () => {
  t = await startTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  ada = await signInUser(t, 'ada@forms.test');
  await createWorkspace(t, ada, { name: 'Club', slug: 'club' });
  for (const column of [
    { key: 'seats', label: 'Seats', type: 'number' },
    { key: 'tags', label: 'Tags', type: 'select', options: [{ value: 'red', label: 'Red' }, { value: 'blue', label: 'Blue' }] },
    { key: 'day', label: 'Day', type: 'date' },
    { key: 'site', label: 'Site', type: 'url' },
    { key: 'agree', label: 'Agree', type: 'checkbox' },
    { key: 'photo', label: 'Photo', type: 'attachment' },
    { key: 'secret', label: 'Secret', type: 'text' },
  ]) {
    ok(await t.request('POST', `${base}/columns`, { as: ada.as, body: { column } }));
  }
  form = await makeForm('club', QUESTIONS);
});
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});
// Each test starts with a fresh per-address budget; the limit has its own test.
beforeEach(() => clock.advance(61_000));

describe('a public form', () => {
  it('describes itself as JSON without an account: its texts and fields with their types and options', async () => {
    const res = await t.request('GET', `/api/forms/${form.token}`);
    expect(ok(res)).toMatchObject({ title: 'Join the club', description: 'Tell us about you.', submitLabel: 'Send', successMessage: 'Welcome aboard!', acceptingAnswers: true });
    expect(res.body.fields.map((field: { key: string; type: string }) => [field.key, field.type])).toEqual([
      ['title', 'text'],
      ['notes', 'longtext'],
      ['seats', 'number'],
      ['status', 'status'],
      ['tags', 'select'],
      ['day', 'date'],
      ['site', 'url'],
      ['agree', 'checkbox'],
      ['photo', 'attachment'],
    ]);
    expect(res.body.fields[0]).toEqual({ key: 'title', label: 'Your name', help: 'As on your passport', required: true, type: 'text' });
    expect(res.body.fields[4]).toMatchObject({ options: [{ value: 'red', label: 'Red' }, { value: 'blue', label: 'Blue' }], multiple: true });
  });

  it('takes every type as JSON: one row, created by the form, with a row.created event by the form and its webhook delivery', async () => {
    const hook = ok(await t.request('POST', `${base}/webhooks`, { as: ada.as, body: { url: 'http://127.0.0.1:9/hook', events: ['row.created'] } }));
    const before = (await rowsOf()).length;
    const res = await submit(form.token, { title: 'Grace', notes: 'Line one\nline two', seats: 3, status: 'doing', tags: ['red', 'blue'], day: '2026-12-01', site: 'https://example.org', agree: true, photo: '' });
    expect(ok(res, 201)).toEqual({ ok: true });
    const rows = await rowsOf();
    expect(rows).toHaveLength(before + 1);
    const row = rows.find((r) => r.data.title === 'Grace')!;
    expect(row.data).toMatchObject({ title: 'Grace', notes: 'Line one\nline two', seats: 3, status: 'doing', tags: ['red', 'blue'], day: '2026-12-01', site: 'https://example.org', agree: true });
    expect(row.createdByPrincipalId).toBe(form.id);
    const events = ok(await t.request('GET', `${base}/events?limit=50`, { as: ada.as })).events as Array<{ eventId: string; event: string; principal: { principalType: string; id: string; name: string } | null; data: { id?: string } }>;
    const created = events.find((event) => event.event === 'row.created' && event.data.id === row.id);
    expect(created?.principal).toMatchObject({ principalType: 'form', id: form.id, name: 'Join the club' });
    // Webhooks are written with the event: the delivery is there at once.
    const deliveries = ok(await t.request('GET', `${base}/webhooks/${hook.id}/deliveries`, { as: ada.as })).deliveries as Array<{ eventId: string; event: string }>;
    expect(deliveries).toContainEqual(expect.objectContaining({ eventId: created!.eventId, event: 'row.created' }));
  });

  it('takes every type as a form post (text values, a field repeated for several values, an unticked box not sent)', async () => {
    const body = new URLSearchParams([
      ['title', 'Hedy'],
      ['notes', ''],
      ['seats', '1,200.5'],
      ['status', 'done'],
      ['tags', 'blue'],
      ['tags', 'red'],
      ['day', '2027-01-15'],
      ['site', ' https://hedy.example '],
      ['_website', ''],
    ]).toString();
    const res = await fetch(`${t.url}/api/forms/${form.token}`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status, await res.clone().text()).toBe(201);
    const row = (await rowsOf()).find((r) => r.data.title === 'Hedy')!;
    expect(row.data).toMatchObject({ seats: 1200.5, status: 'done', tags: ['blue', 'red'], day: '2027-01-15', site: 'https://hedy.example' });
    expect(row.data.notes ?? null).toBeNull();
    expect(row.data.agree ?? false).toBe(false);
  });

  it('takes files into its attachment field as multipart, stored in the workspace as the form', async () => {
    const image = await png(32, 32);
    const res = await postMultipart(t, `/api/forms/${form.token}`, [
      { name: 'title', value: 'Ida' },
      { name: 'photo', bytes: image, filename: 'me.png', type: 'image/png' },
    ]);
    expect(res.status, res.text).toBe(201);
    const row = (await rowsOf()).find((r) => r.data.title === 'Ida')!;
    expect(row.data.photo).toEqual([expect.objectContaining({ name: 'me.png', contentType: 'image/png', thumbnailUrl: expect.any(String) })]);
  });

  it('refuses a required field left empty and values that do not fit, naming each field, and writes nothing', async () => {
    const before = (await rowsOf()).length;
    const res = await submit(form.token, { title: '  ', seats: 'many', status: 'nope', tags: ['green'], day: '31/12/2026', site: 'not a url', agree: 'maybe' });
    expect(res.status, res.text).toBe(422);
    expect(res.body.error.code).toBe('validation');
    const paths = (res.body.error.details as Array<{ path: string[] }>).map((detail) => detail.path[0]);
    expect(paths).toEqual(expect.arrayContaining(['seats', 'day', 'agree']));
    // Once the shapes are right, the column rules speak: the required name, the option and the URL.
    const second = await submit(form.token, { title: '', status: 'nope', tags: ['green'], site: 'not a url' });
    expect(second.status, second.text).toBe(422);
    expect((second.body.error.details as Array<{ path: string[] }>).map((detail) => detail.path[0])).toContain('title');
    const third = await submit(form.token, { title: 'Jo', status: 'nope', tags: ['green'], site: 'not a url' });
    expect(third.status, third.text).toBe(422);
    expect((third.body.error.details as Array<{ path: string[] }>).map((detail) => detail.path.at(-1))).toEqual(expect.arrayContaining(['status', 'tags', 'site']));
    expect(await rowsOf()).toHaveLength(before);
  });

  it('refuses a field that is not on the form with 400 naming it: a column the form does not ask cannot be set', async () => {
    const before = (await rowsOf()).length;
    const res = await submit(form.token, { title: 'Mallory', secret: 'set by a stranger', createdBy: 'me' });
    expect(res.status, res.text).toBe(400);
    expect((res.body.error.details as Array<{ path: string[]; code: string }>).map((detail) => [detail.path[0], detail.code])).toEqual([
      ['secret', 'not_on_form'],
      ['createdBy', 'not_on_form'],
    ]);
    expect(await rowsOf()).toHaveLength(before);
  });

  it('drops a submission whose honeypot is filled in, answering as if it were taken', async () => {
    const before = (await rowsOf()).length;
    ok(await submit(form.token, { title: 'Bot', _website: 'http://spam.example' }), 201);
    const page = await postForm(form.token, new URLSearchParams({ title: 'Bot 2', _website: 'buy now' }).toString());
    expect(page.status).toBe(303);
    expect(await rowsOf()).toHaveLength(before);
  });

  it('limits submissions per address and form: 429 with Retry-After past FORM_SUBMISSIONS_PER_MINUTE (10), other forms unaffected', async () => {
    const limited = await makeForm('club', [{ column: 'title', required: true }]);
    for (let i = 0; i < 10; i++) ok(await submit(limited.token, { title: `Burst ${i}` }), 201);
    const refused = await submit(limited.token, { title: 'Burst 10' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ code: 'rate_limited', endpoint: 'form_submissions', limit: 10, window: '1m' });
    // The page says so to a browser.
    const page = await postForm(limited.token, 'title=Burst+11');
    expect(page.status).toBe(429);
    expect(await page.text()).toContain('Too many answers were sent from your address');
    // Another form from the same address is its own budget.
    ok(await submit(form.token, { title: 'Not limited' }), 201);
    clock.advance(61_000);
    ok(await submit(limited.token, { title: 'After a minute' }), 201);
  });

  it('bounds a body: a JSON answer past 64 KB is 413 and nothing is written', async () => {
    const before = (await rowsOf()).length;
    const res = await submit(form.token, { title: 'Big', notes: 'x'.repeat(70 * 1024) });
    expect(res.status).toBe(413);
    expect(await rowsOf()).toHaveLength(before);
  });

  it('answers 404 form_not_found at once when closed or deleted, and for an unknown token; reopened, the same link works again', async () => {
    const closing = await makeForm('club', [{ column: 'title', required: true }]);
    ok(await submit(closing.token, { title: 'Before closing' }), 201);
    const closed = ok(await t.request('PATCH', `${base}/views/${closing.id}`, { as: ada.as, body: { form: { open: false } } })).view;
    expect(closed.publicUrl).toBeNull();
    for (const res of [await submit(closing.token, { title: 'After closing' }), await t.request('GET', `/api/forms/${closing.token}`)]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('form_not_found');
    }
    const page = await fetch(`${t.url}/forms/${closing.token}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('This form is closed, or it does not exist.');
    const reopened = ok(await t.request('PATCH', `${base}/views/${closing.id}`, { as: ada.as, body: { form: { open: true } } })).view;
    expect(reopened.publicUrl).toBe(closing.publicUrl);
    ok(await submit(closing.token, { title: 'Reopened' }), 201);
    ok(await t.request('DELETE', `${base}/views/${closing.id}`, { as: ada.as }));
    expect((await submit(closing.token, { title: 'After deleting' })).status).toBe(404);
    expect((await t.request('GET', '/api/forms/unknown-token')).body.error.code).toBe('form_not_found');
    expect((await rowsOf()).filter((row) => row.data.title === 'After closing' || row.data.title === 'After deleting')).toEqual([]);
  });

  it('at the plan’s row cap: the page says the form takes no more answers, a submission is 402 form_full, and deleting a row makes room', async () => {
    const cap = capsFor('free').rowsPerWorkspace;
    const full = await addWorkspaceWithRows(t, ada, 'full', cap);
    const capped = await makeForm('full', [{ column: 'title', required: true }]);
    expect(ok(await t.request('GET', `/api/forms/${capped.token}`)).acceptingAnswers).toBe(false);
    const page = await fetch(`${t.url}/forms/${capped.token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('This form can take no more answers.');
    expect(html).not.toContain('<form');
    const refused = await submit(capped.token, { title: 'One too many' });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'form_full', message: 'This form can take no more answers.' });
    // Nothing about the organisation's plan reaches the public.
    expect(refused.text).not.toMatch(/free|upgrade/i);
    ok(await t.request('DELETE', `/api/workspaces/full/rows/${full.rowIds[0]}`, { as: ada.as }));
    ok(await submit(capped.token, { title: 'Room again' }), 201);
  }, 60_000);
});

describe('the public page', () => {
  it('is plain HTML with a label for every field, help tied to its field, the honeypot hidden, and no script', async () => {
    const res = await fetch(`${t.url}/forms/${form.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-robots-tag')).toContain('noindex');
    const html = await res.text();
    expect(html).toContain('<h1>Join the club</h1>');
    expect(html).toContain('enctype="multipart/form-data"');
    expect(html).not.toContain('<script');
    for (const key of ['title', 'notes', 'seats', 'status', 'day', 'site', 'agree', 'photo']) expect(html).toContain(`for="field-${key}"`);
    expect(html).toContain('<legend>Tags</legend>');
    expect(html).toMatch(/id="field-title" name="title" value=""[^>]*aria-describedby="help-title"[^>]*required/);
    expect(html).toContain('<div class="hp" aria-hidden="true">');
    expect(html).not.toContain('secret');
  });

  it('sent without JavaScript: a problem answers the page again with the answers kept and the errors at their fields; sent, it shows the form’s message', async () => {
    const refused = await postForm(form.token, new URLSearchParams({ title: '', seats: 'lots', notes: 'kept <b>safe</b>' }).toString());
    expect(refused.status).toBe(422);
    const html = await refused.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('<a href="#field-title">Your name is required.</a>');
    expect(html).toMatch(/id="field-seats" name="seats" value="lots" aria-describedby="error-seats" aria-invalid="true"/);
    expect(html).toContain('<p class="error" id="error-seats">Error: seats must be a number.</p>');
    expect(html).toContain('kept &lt;b&gt;safe&lt;/b&gt;</textarea>');
    // An API client asking for JSON gets the documented error instead.
    const json = await postForm(form.token, 'title=', 'application/json');
    expect(json.status).toBe(422);
    expect((await json.json()).error.code).toBe('validation');
    const sent = await postForm(form.token, new URLSearchParams({ title: 'Katherine', seats: '2' }).toString());
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`${form.token}?sent=1`);
    const thanks = await fetch(new URL(sent.headers.get('location')!, `${t.url}/forms/${form.token}`));
    expect(await thanks.text()).toContain('<p class="notice" role="status">Welcome aboard!</p>');
    expect((await rowsOf()).find((row) => row.data.title === 'Katherine')?.data.seats).toBe(2);
  });
});
