import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app';
import { createWorkspace, insertKey, signInUser, type TestUser } from '../workspaces/helpers';
import { bearerOf, checkedClients } from '../mcp/helpers';
import { SAMPLE_WORD_MARKDOWN, sampleWordFile } from './word-files';

/**
 * A doc in and out as files, through the real server: a Word file made
 * by a Word-compatible writer imports to the expected Markdown with its
 * image stored as a doc image; a doc exported as Word imports back to the
 * same doc; a PDF holds every paragraph in order (read back with a PDF
 * reader); HTML is sanitised with a warning; bad files change nothing.
 */

let t: TestApp & { store: { dispose(): Promise<void> } };
let ada: TestUser;
const base = '/api/workspaces/papers';
const clients = checkedClients(() => t);

beforeAll(async () => {
  t = await startTestApp();
  ada = await signInUser(t, 'ada@docs-io.test');
  await createWorkspace(t, ada, { name: 'Papers', slug: 'papers', mode: 'doc', initialMarkdown: '# Before\n\nWhat was there.\n' });
});
afterAll(async () => {
  await clients.closeAll();
  await t.close();
  await t.store.dispose();
});

async function importFile(bytes: Uint8Array, name: string, query = '', type = 'application/octet-stream') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
  const response = await fetch(`${t.url}${base}/doc/import${query}`, { method: 'POST', body: form, headers: { cookie: `svc-session=${ada.cookie}` } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function markdownOf(surface = 'doc'): Promise<string> {
  const res = await t.request('GET', `${base}/doc?format=markdown&surface=${surface}`, { as: ada.as });
  expect(res.status).toBe(200);
  return res.body.markdown;
}

async function contentOf(surface = 'doc') {
  return (await t.request('GET', `${base}/doc?surface=${surface}`, { as: ada.as })).body.content;
}

async function download(query: string) {
  const response = await fetch(`${t.url}${base}/doc?${query}`, { headers: { cookie: `svc-session=${ada.cookie}` } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function pdfText(bytes: Buffer): Promise<string> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const pdf = await pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  let text = '';
  for (let i = 1; i <= pdf.numPages; i++) {
    const content = await (await pdf.getPage(i)).getTextContent();
    text += content.items.map((item) => ('str' in item ? item.str : '')).join('');
  }
  return text;
}

describe('import into a doc', () => {
  it('imports a Word file with headings, nested lists, a table, an image, a footnote and non-ASCII text as the expected Markdown', async () => {
    const res = await importFile(await sampleWordFile(), 'Bericht.docx');
    expect(res.status).toBe(200);
    expect(res.body.surface).toMatchObject({ slug: 'doc', kind: 'doc' });
    expect(res.body.warnings).toEqual(['1 × underlined text is kept without its underline']);
    const markdown = await markdownOf();
    const image = /!\[A chart\]\(([^)]+)\)/.exec(markdown)![1]!;
    expect(image).toMatch(new RegExp(`^${t.url}/api/blobs/img_[A-Za-z0-9_-]+\\.png$`));
    expect(markdown.replace(image, 'IMAGE')).toBe(SAMPLE_WORD_MARKDOWN);
    const served = await fetch(image);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
  });

  it('records the import as a named version by the importer', async () => {
    const res = await t.request('GET', `${base}/surfaces/doc/versions`, { as: ada.as });
    expect(res.status).toBe(200);
    const named = res.body.versions.find((v: { kind: string }) => v.kind === 'named');
    expect(named).toMatchObject({ name: 'Imported Bericht.docx', createdBy: { id: ada.userId } });
  });

  it('attributes every imported character to the importer', async () => {
    const text = (await t.request('GET', `${base}/doc?format=text`, { as: ada.as })).body.text as string;
    const res = await t.request('GET', `${base}/doc?attribution=1`, { as: ada.as });
    expect(res.status).toBe(200);
    const spans = res.body.spans as Array<{ text: string; principal: { id: string } | null }>;
    expect(spans.map((span) => span.text).join('')).toBe(text);
    expect(text).toContain('Überschrift – 報告');
    expect(new Set(spans.map((span) => span.principal?.id))).toEqual(new Set([ada.userId]));
  });

  it('gives the same doc back from its own Word export', async () => {
    const markdown = [
      '# Plan — план 計画',
      '',
      'Intro with **bold**, *italic*, ~~strike~~, `code` and a [link](https://example.com/a).',
      '',
      '- one',
      '  - one point one',
      '- two',
      '',
      '1. three',
      '2. four',
      '',
      '- [ ] open task',
      '- [x] done task',
      '',
      '> Quoted wisdom.',
      '',
      '```',
      'const x = 1;',
      'return x;',
      '```',
      '',
      '| A | B |',
      '| --- | --- |',
      '| α | β |',
      '',
      '---',
      '',
      'Ask [@Ada Lovelace](mention:user/u_1) about it.  ',
      'Second line.',
      '',
    ].join('\n');
    expect((await t.request('PUT', `${base}/doc`, { as: ada.as, body: { markdown } })).status).toBe(200);
    const before = await contentOf();
    const word = await download('format=docx');
    expect(word.status).toBe(200);
    expect(word.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(word.headers.get('content-disposition')).toMatch(/^attachment; filename="Doc\.docx"/);
    const res = await importFile(word.bytes, 'round.docx');
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual([]);
    expect(await contentOf()).toEqual(before);
  });

  it('makes a new doc surface named after the file with mode=new', async () => {
    const res = await importFile(Buffer.from('# Notes\n\nFrom *Markdown*.\n'), 'Meeting notes.md', '?mode=new');
    expect(res.status).toBe(200);
    expect(res.body.surface).toMatchObject({ name: 'Meeting notes', slug: 'meeting-notes', kind: 'doc' });
    expect(await markdownOf('meeting-notes')).toBe('# Notes\n\nFrom *Markdown*.\n');
  });

  it('sanitises HTML (scripts and handlers go, with a warning) and stores its data: images', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const html =
      '<html><head><title>x</title><script>alert(1)</script></head><body><h2 onclick="steal()">Hi <u>there</u></h2>' +
      `<p>Text<script>evil()</script> <img src="data:image/png;base64,${png.toString('base64')}" alt="dot"></p><p><a href="javascript:alert(1)">bad</a></p></body></html>`;
    const res = await importFile(Buffer.from(html), 'page.html', '?surface=meeting-notes');
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['removed as unsafe: <script> (2), onclick attribute, href attribute', '1 × underlined text is kept without its underline']);
    const markdown = await markdownOf('meeting-notes');
    expect(markdown).toMatch(new RegExp(`^## Hi there\\n\\nText !\\[dot\\]\\(${t.url}/api/blobs/img_[A-Za-z0-9_-]+\\.png\\)\\n\\nbad\\n$`));
    expect(markdown).not.toMatch(/alert|evil|steal|javascript/);
  });

  it('refuses a corrupt Word file, a binary file named .md and an unknown type, changing nothing', async () => {
    const before = await markdownOf();
    const corrupt = await importFile(Buffer.from('PK\u0003\u0004 not really a zip at all'), 'broken.docx');
    expect(corrupt.status).toBe(422);
    expect(corrupt.body.error.details).toEqual([expect.objectContaining({ path: ['file'], code: 'content_type_mismatch' })]);
    const binary = await importFile(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]), 'notes.md');
    expect(binary.status).toBe(422);
    const unknown = await importFile(Buffer.from('x'), 'sheet.xlsx');
    expect(unknown.status).toBe(415);
    expect(await markdownOf()).toBe(before);
    const surfaces = (await t.request('GET', `${base}/surfaces`, { as: ada.as })).body.surfaces.map((s: { slug: string }) => s.slug);
    expect(surfaces).toEqual(['doc', 'meeting-notes']);
  });

  it('refuses a file past the upload limit with 413', async () => {
    const res = await importFile(Buffer.alloc(25 * 1024 * 1024 + 10, 0x61), 'huge.md');
    expect(res.status).toBe(413);
  });
});

describe('export a doc', () => {
  it('writes a PDF whose text holds every paragraph in order, non-Latin text included', async () => {
    const paragraphs = ['Первый абзац на русском.', 'Δεύτερη παράγραφος στα ελληνικά.', '第三段是中文文本。', 'Fourth paragraph, plain English.'];
    const markdown = `# Report\n\n${paragraphs.join('\n\n')}\n\n| A | B |\n| --- | --- |\n| cell one | 单元格 |\n\n- item with Ünïcödé\n`;
    await t.request('PUT', `${base}/doc?surface=meeting-notes`, { as: ada.as, body: { markdown } });
    const pdf = await download('format=pdf&surface=meeting-notes');
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^attachment; filename="Meeting notes\.pdf"; filename\*=UTF-8''Meeting%20notes\.pdf$/);
    const text = (await pdfText(pdf.bytes)).replace(/\s+/g, '');
    let at = 0;
    for (const expected of ['Report', ...paragraphs, 'cellone', '单元格', 'itemwithÜnïcödé']) {
      const found = text.indexOf(expected.replace(/\s+/g, ''), at);
      expect(found, expected).toBeGreaterThanOrEqual(at);
      at = found;
    }
  });

  it('writes a standalone HTML page', async () => {
    const html = await download('format=html&surface=meeting-notes');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = html.bytes.toString('utf8');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<title>Meeting notes</title>');
    expect(page).toContain('<h1>Report</h1>');
    expect(page).toContain('<td><p>单元格</p></td>');
  });
});

describe('over MCP', () => {
  it('import_doc takes base64 and export_doc answers base64 or text', async () => {
    const agent = await insertKey(t, ada, { role: 'editor', agentName: 'filer' });
    const mcp = await clients.open(bearerOf(agent.as));
    const imported = await mcp.callTool({
      name: 'import_doc',
      arguments: { slug: 'papers', mode: 'new', name: 'From agent.md', contentBase64: Buffer.from('# Agent\n\nWrote this.\n').toString('base64') },
    });
    expect(imported.isError).toBeFalsy();
    expect(imported.structuredContent).toMatchObject({ surface: { slug: 'from-agent' }, warnings: [] });
    const word = await mcp.callTool({ name: 'export_doc', arguments: { slug: 'papers', surface: 'from-agent', format: 'docx' } });
    expect(word.structuredContent).toMatchObject({ name: 'From agent.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    const bytes = Buffer.from((word.structuredContent as { contentBase64: string }).contentBase64, 'base64');
    expect(bytes.subarray(0, 2).toString()).toBe('PK');
    const page = await mcp.callTool({ name: 'export_doc', arguments: { slug: 'papers', surface: 'from-agent', format: 'html' } });
    expect((page.structuredContent as { text: string }).text).toContain('<h1>Agent</h1>');
  });
});
