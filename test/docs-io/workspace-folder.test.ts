import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace, signInUser, type TestUser } from '../workspaces/helpers';
import { png, postMultipart, proxyUpload, unzip, zipOf } from '../files/helpers';

/**
 * A workspace out as a folder and back: the export holds each page as
 * Markdown (html as .html) with its images beside it, each table as CSV
 * with its column types, files as folders; imported again it gives equal
 * docs, tables and files, nesting and links kept. A Notion export comes in
 * with its nesting, database and images; bad archives are refused with
 * nothing made, and a bad entry is reported while the rest goes in.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let ada: TestUser;
let logo: Buffer;
const src = '/api/workspaces/source';

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@folders.test');
  logo = await png(12, 8);
  await createWorkspace(t, ada, { name: 'Source', slug: 'source', mode: 'doc', initialMarkdown: '# Overview\n\nStart here.\n' });
}, 60_000);
afterAll(async () => {
  await t.close();
  await t.store.dispose();
});

const as = () => ada.as;
async function ok(method: string, url: string, body?: unknown) {
  const res = await t.request(method, url, { as: as(), ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.body;
}

async function uploadImage(slug: string): Promise<string> {
  const res = await postMultipart(t, `/api/workspaces/${slug}/upload`, [{ name: 'file', bytes: logo, filename: 'logo.png', type: 'image/png' }], as());
  return (res.body as { url: string }).url;
}

async function importArchive(bytes: Buffer, slug: string, name?: string) {
  const parts = [...(name ? [{ name: 'name', value: name }] : []), { name: 'slug', value: slug }, { name: 'file', bytes, filename: 'export.zip', type: 'application/zip' }];
  const res = await postMultipart(t, '/api/workspaces/import', parts, as());
  return { status: res.status, body: res.body as any };
}

async function finished(jobId: string) {
  for (let i = 0; i < 600; i++) {
    const { job } = await ok('GET', `/api/jobs/${jobId}`);
    if (job.status !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the job did not finish');
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(`${t.url}${url}`, { headers: { cookie: `svc-session=${ada.cookie}` } });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Everything a person sees of a workspace, with the workspace's own slug and image addresses made neutral. */
async function snapshot(slug: string) {
  const base = `/api/workspaces/${slug}`;
  const { surfaces } = await ok('GET', `${base}/surfaces`);
  const byId = new Map(surfaces.map((s: { id: string; name: string }) => [s.id, s.name]));
  const result: Record<string, unknown> = {};
  for (const surface of surfaces) {
    const key = `${surface.kind}:${surface.name}${surface.parentId ? ` (in ${byId.get(surface.parentId)})` : ''}`;
    if (surface.kind === 'doc') {
      const { markdown } = await ok('GET', `${base}/doc?format=markdown&surface=${surface.slug}`);
      result[key] = markdown.replaceAll(`${t.url}/${ada.orgSlug}/${slug}/`, '/ORG/WS/').replaceAll(`/${ada.orgSlug}/${slug}/`, '/ORG/WS/').replace(/\/api\/blobs\/img_[A-Za-z0-9_-]+\.png/g, '/api/blobs/IMAGE.png');
    } else if (surface.kind === 'html') {
      const { html } = await ok('GET', `${base}/surfaces/${surface.slug}/html`);
      result[key] = html.replaceAll(`${t.url}/${ada.orgSlug}/${slug}/`, '/ORG/WS/').replaceAll(`/${ada.orgSlug}/${slug}/`, '/ORG/WS/').replace(/\/api\/blobs\/img_[A-Za-z0-9_-]+\.png/g, '/api/blobs/IMAGE.png');
    } else if (surface.kind === 'table') {
      const columns = (await ok('GET', `${base}/columns?surface=${surface.slug}`)).columns.map((c: { key: string; type: string; label: string; options?: unknown }) => ({
        key: c.key,
        type: c.type,
        label: c.label,
        options: c.options ?? null,
      }));
      const rows = (await ok('GET', `${base}/rows?surface=${surface.slug}&limit=1000`)).rows.map((r: { id: string; data: unknown }) => ({ id: r.id, data: r.data }));
      result[key] = { columns, rows };
    } else {
      const listing = await ok('GET', `${base}/files?surfaceSlug=${surface.slug}&q=`);
      const files: Record<string, string> = {};
      const walk = async (folderId: string | null, prefix: string) => {
        const page = await ok('GET', `${base}/files?surfaceSlug=${surface.slug}${folderId ? `&parentFolderId=${folderId}` : ''}`);
        for (const file of page.files) files[`${prefix}${file.name}`] = (await download(new URL(file.url).pathname)).toString('base64');
        for (const folder of page.folders) await walk(folder.id, `${prefix}${folder.name}/`);
      };
      void listing;
      await walk(null, '');
      result[key] = files;
    }
  }
  return result;
}

describe('a workspace out as a folder and back', () => {
  let exported: Buffer;

  beforeAll(async () => {
    const image = await uploadImage('source');
    const { surfaces } = await ok('GET', `${src}/surfaces`);
    const overview = surfaces.find((s: { slug: string }) => s.slug === 'doc');
    await ok('PATCH', `${src}/surfaces/doc`, { name: 'Overview' });
    const child = await ok('POST', `${src}/surfaces`, { kind: 'doc', name: 'Child page' });
    // Nesting is made by imports only so far: set it as an import would.
    await t.services.db.updateTable('surfaces').set({ parentId: overview.id }).where('id', '=', child.id).execute();
    await ok('POST', `${src}/surfaces`, { kind: 'table', name: 'Tasks' });
    await ok('POST', `${src}/surfaces`, { kind: 'html', name: 'Landing' });
    await ok('POST', `${src}/surfaces`, { kind: 'files', name: 'Files' });
    await ok('PUT', `${src}/doc?surface=overview`, {
      markdown: `# Overview\n\nSee the [child](${t.services.config.publicUrl}/${ada.orgSlug}/source/child-page) and [the tasks](/${ada.orgSlug}/source/tasks).\n\n![Logo](${image})\n\n- Ünïcödé — 中文\n`,
    });
    await ok('PUT', `${src}/doc?surface=child-page`, { markdown: `# Child\n\nBack to [overview](/${ada.orgSlug}/source/overview).\n` });
    await ok('PUT', `${src}/columns?surface=tasks`, {
      columns: [
        { key: 'title', label: 'Title', type: 'text', position: 0 },
        { key: 'estimate', label: 'Estimate', type: 'number', position: 1 },
        { key: 'done', label: 'Done', type: 'checkbox', position: 2 },
        { key: 'stage', label: 'Stage', type: 'select', position: 3, options: [{ value: 'todo', label: 'To do' }, { value: 'ship', label: 'Ship' }] },
        { key: 'due', label: 'Due', type: 'date', position: 4 },
      ],
    });
    for (let i = 0; i < 30; i++) {
      await ok('POST', `${src}/rows?surface=tasks`, { data: { title: `Task, "${i}"\nline two`, estimate: i * 1.5, done: i % 2 === 0, stage: i % 3 ? 'todo' : 'ship', due: `2026-0${(i % 9) + 1}-1${i % 10}` } });
    }
    await ok('PUT', `${src}/surfaces/landing/html`, { html: `<h1>Landing</h1><p><img src="${image}" alt="logo"> <a href="/${ada.orgSlug}/source/overview">home</a></p>` });
    const folder = await ok('POST', `${src}/files/folders`, { surfaceSlug: 'files', name: 'Reports' });
    expect((await proxyUpload(t, `${src}/files`, as(), { bytes: Buffer.from('q1 numbers\n'), name: 'q1.txt', type: 'text/plain' }, { folder: folder.id })).status).toBe(200);
    expect((await proxyUpload(t, `${src}/files`, as(), { bytes: logo, name: 'logo.png', type: 'image/png' })).status).toBe(200);
    await ok('PATCH', src, { timeZone: 'Asia/Tokyo' });
    exported = await download(`${src}/export.zip`);
  }, 120_000);

  it('exports Markdown per doc, .html, images beside, CSV with a column sidecar, files as folders', async () => {
    const entries = await unzip(exported);
    expect([...entries.keys()].sort()).toEqual(
      [
        'trellis-workspace.json',
        'Overview.md',
        'Overview/image-1.png',
        'Overview/Child page.md',
        'Tasks.csv',
        'Tasks.columns.json',
        'Landing.html',
        'Landing/image-1.png',
        'Files/Reports/',
        'Files/Reports/q1.txt',
        'Files/logo.png',
      ].sort(),
    );
    expect(entries.get('Overview.md')!.toString()).toBe(
      '# Overview\n\nSee the [child](Overview/Child%20page.md) and [the tasks](Tasks.csv).\n\n![Logo](Overview/image-1.png)\n\n- Ünïcödé — 中文\n',
    );
    expect(entries.get('Overview/Child page.md')!.toString()).toBe('# Child\n\nBack to [overview](../Overview.md).\n');
    expect(entries.get('Overview/image-1.png')!.subarray(1, 4).toString()).toBe('PNG');
    const csv = entries.get('Tasks.csv')!.toString();
    expect(csv.split('\r\n')[0]).toBe('id,title,estimate,done,stage,due');
    expect(JSON.parse(entries.get('Tasks.columns.json')!.toString()).columns.map((c: { type: string }) => c.type)).toEqual(['text', 'number', 'checkbox', 'select', 'date']);
    expect(entries.get('Landing.html')!.toString()).toContain('src="Landing/image-1.png"');
    expect(entries.get('Files/Reports/q1.txt')!.toString()).toBe('q1 numbers\n');
  });

  it('imports the export again as equal docs, tables (rows, column types) and files', async () => {
    const started = await importArchive(exported, 'copy', 'Copy');
    expect(started.status).toBe(202);
    expect(started.body.job).toMatchObject({ status: 'running', kind: 'workspace_import' });
    const job = await finished(started.body.job.id);
    expect(job).toMatchObject({ status: 'done', errors: [], workspace: { slug: 'copy', name: 'Copy' } });
    expect(job.progress.done).toBe(job.progress.total);
    expect(job.progress.total).toBeGreaterThan(5);
    const [before, after] = [await snapshot('source'), await snapshot('copy')];
    expect(after).toEqual(before);
    // Its formulas read dates in the same zone as the source's.
    expect((await ok('GET', '/api/workspaces/copy')).timeZone).toBe('Asia/Tokyo');
    expect(Object.keys(after)).toContain('doc:Child page (in Overview)');
  }, 120_000);

  it('refuses another caller reading the job', async () => {
    const started = await importArchive(exported, 'copy-two');
    const bob = await signInUser(t, 'bob@folders.test');
    expect((await t.request('GET', `/api/jobs/${started.body.job.id}`, { as: bob.as })).status).toBe(404);
    expect((await finished(started.body.job.id)).status).toBe('done');
  }, 120_000);
});

const ID = (n: number) => n.toString(16).padStart(32, 'a');

describe('a Notion "Markdown & CSV" export', () => {
  it('comes in with nested pages, the database as a typed table, images stored and links rewritten; a bad entry is reported, the rest goes in', async () => {
    const home = `Home ${ID(1)}`;
    const archive = await zipOf([
      [`Export-1234/${home}.md`, `# Home\n\nSee [Projects](${encodeURIComponent(home)}/Projects%20${ID(2)}.md) and [Tasks](${encodeURIComponent(home)}/Tasks%20${ID(3)}.csv).\n\n![logo](${encodeURIComponent(home)}/logo.png)\n`],
      [`Export-1234/${home}/Projects ${ID(2)}.md`, `# Projects\n\nBack [home](../Home%20${ID(1)}.md).\n`],
      [`Export-1234/${home}/Tasks ${ID(3)}.csv`, 'Name,Estimate,Due\nOnly the view,1,2026-01-01\n'],
      [`Export-1234/${home}/Tasks ${ID(3)}_all.csv`, '\uFEFFName,Estimate,Due\nWrite,3,2026-01-05\nShip,5,2026-02-01\nCelebrate,1,2026-03-01\n'],
      [`Export-1234/${home}/logo.png`, logo],
      [`Export-1234/${home}/Broken ${ID(4)}.md`, Buffer.from([0x23, 0x20, 0, 0xff, 0xfe])],
    ]);
    const started = await importArchive(archive, 'from-notion');
    expect(started.status).toBe(202);
    const job = await finished(started.body.job.id);
    expect(job.status).toBe('done');
    expect(job.errors).toEqual([{ path: `${home}/Broken ${ID(4)}.md`, message: 'not UTF-8 text' }]);
    expect(job.workspace).toMatchObject({ slug: 'from-notion', name: 'Home' });
    const base = '/api/workspaces/from-notion';
    const { surfaces } = await ok('GET', `${base}/surfaces`);
    const named = (name: string) => surfaces.find((s: { name: string }) => s.name === name);
    expect(surfaces.map((s: { kind: string; name: string }) => `${s.kind}:${s.name}`).sort()).toEqual(['doc:Broken', 'doc:Home', 'doc:Projects', 'table:Tasks']);
    expect(named('Projects').parentId).toBe(named('Home').id);
    expect(named('Tasks').parentId).toBe(named('Home').id);
    const { markdown } = await ok('GET', `${base}/doc?format=markdown&surface=${named('Home').slug}`);
    const address = `${t.services.config.publicUrl}/${ada.orgSlug}/from-notion`;
    expect(markdown).toMatch(
      new RegExp(`^# Home\\n\\nSee \\[Projects\\]\\(${address}/projects\\) and \\[Tasks\\]\\(${address}/tasks\\)\\.\\n\\n!\\[logo\\]\\(${t.url}/api/blobs/img_[A-Za-z0-9_-]+\\.png\\)\\n$`),
    );
    expect((await ok('GET', `${base}/doc?format=markdown&surface=projects`)).markdown).toBe(`# Projects\n\nBack [home](${address}/home).\n`);
    const columns = (await ok('GET', `${base}/columns?surface=tasks`)).columns.map((c: { key: string; type: string }) => [c.key, c.type]);
    expect(columns).toEqual([['name', 'text'], ['estimate', 'number'], ['due', 'date']]);
    const rows = (await ok('GET', `${base}/rows?surface=tasks`)).rows.map((r: { data: unknown }) => r.data);
    expect(rows).toEqual([
      { name: 'Write', estimate: 3, due: '2026-01-05' },
      { name: 'Ship', estimate: 5, due: '2026-02-01' },
      { name: 'Celebrate', estimate: 1, due: '2026-03-01' },
    ]);
  }, 120_000);
});

describe('bad archives', () => {
  async function refused(bytes: Buffer, slug: string) {
    const started = await importArchive(bytes, slug);
    expect(started.status).toBe(202);
    const job = await finished(started.body.job.id);
    expect(job.status).toBe('failed');
    expect(job.workspace).toBeUndefined();
    expect((await t.request('GET', `/api/workspaces/${slug}`, { as: as() })).status).toBe(404);
    return job;
  }

  it('refuses a zip bomb before making anything', async () => {
    const job = await refused(await zipOf([['page.md', '# Fine\n'], ['bomb.md', Buffer.alloc(60 * 1024 * 1024, 0x20)]]), 'bomb');
    expect(job.errors).toEqual([{ path: 'bomb.md', message: expect.stringMatching(/zip bomb/) }]);
  }, 60_000);

  it('refuses a path that leaves the folder before making anything', async () => {
    const bytes = await zipOf([['page.md', '# Fine\n'], ['xx/evil.md', '# Evil\n']]);
    // The same length, so the archive stays well-formed: the name in both headers becomes `../evil.md`.
    const escaped = Buffer.from(bytes.toString('latin1').replaceAll('xx/evil.md', '../evil.md'), 'latin1');
    const job = await refused(escaped, 'escape');
    expect(job.errors).toEqual([{ path: '../evil.md', message: 'a path that leaves the folder (..)' }]);
  }, 60_000);

  it('refuses bytes that are not a zip', async () => {
    const job = await refused(Buffer.from('this is not an archive at all'), 'not-zip');
    expect(job.errors[0]).toMatchObject({ path: '' });
  }, 60_000);

  it('refuses a missing slug with 400 and no job', async () => {
    const res = await postMultipart(t, '/api/workspaces/import', [{ name: 'file', bytes: await zipOf([['a.md', '# A\n']]), filename: 'a.zip' }], as());
    expect(res.status).toBe(400);
  });

  it('refuses an archive declared past 512 MB with 413 before reading it', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${t.url}/api/workspaces/import`, {
        method: 'POST',
        headers: { cookie: `svc-session=${ada.cookie}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(600 * 1024 * 1024) },
      });
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body: text });
          request.destroy();
        });
      });
      request.on('error', reject);
      request.write('--x\r\n');
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).error.message).toBe('A workspace archive is at most 512 MB.');
  });

  it('refuses a slug already taken with 409 and no job', async () => {
    const res = await importArchive(await zipOf([['a.md', '# A\n']]), 'source');
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe('A workspace with the slug "source" already exists in this organisation.');
  });
});
