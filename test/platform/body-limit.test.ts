import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_LIMIT } from '../../src/app';
import { AVATAR_MAX_BYTES, DOC_IMAGE_MAX_BYTES } from '../../src/domain/doc-images';
import { FILE_LIMITS } from '../../src/domain/files';
import { SCREENSHOT_MAX_BYTES } from '../../src/domain/support';
import { startTestApp, type TestApp } from '../helpers/app';
import { filesWorkspace } from '../files/helpers';
import type { TestUser } from '../workspaces/helpers';

/**
 * Issue 33 item 8: a body past its route's size limit is refused as soon as
 * the limit is passed, not read to its end and thrown away. An uploader that
 * keeps sending after the limit must get its 413 while it is still sending,
 * and the server must stop taking its bytes (it closes the connection), so
 * the uploader can never hand over the whole body.
 *
 * The uploader is a plain socket speaking HTTP/1.1, so no client library
 * decides anything for it: each chunk is written only once the connection
 * has taken the previous one, and it keeps writing after the answer until
 * the server stops reading. What it managed to write is what the server
 * consumed plus what the kernel's buffers hold; the body is large enough
 * past the limit that those buffers cannot hide a server that reads on.
 */

const CHUNK = Buffer.alloc(64 * 1024, 'a');
/** Well past any buffer between the two ends (loopback receive buffers grow to tens of MB). */
const PAST_THE_LIMIT = 96 * 1024 * 1024;
const BOUNDARY = 'body-limit-boundary';

type Upload = { status: number; body: any; headers: Record<string, string>; sentBeforeAnswer: number; sent: number; finished: boolean };

type Body = { contentType: string; head: string; filler: number; tail: string; declaredLength?: boolean };

/**
 * Sends `head`, then `filler` bytes, then `tail`: chunked, or with a
 * Content-Length when `declaredLength`. Resolves once the answer has been
 * read and the uploader has either sent everything or been cut off.
 */
function upload(t: TestApp, method: string, path: string, body: Body, headers: Record<string, string> = {}): Promise<Upload> {
  const { port } = new URL(t.url);
  const head = Buffer.from(body.head);
  const tail = Buffer.from(body.tail);
  const total = head.length + body.filler + tail.length;
  const framing = body.declaredLength ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' };
  const requestHead = [`${method} ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, `content-type: ${body.contentType}`, 'accept: application/json']
    .concat(Object.entries({ ...framing, ...headers }).map(([name, value]) => `${name}: ${value}`))
    .join('\r\n');

  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let sent = 0;
    let sentBeforeAnswer = -1;
    let finished = false;
    let closed = false;
    let received = Buffer.alloc(0);
    let answer: Omit<Upload, 'sentBeforeAnswer' | 'sent' | 'finished'> | undefined;

    const settle = () => {
      if (!answer || !(finished || closed)) return;
      socket.destroy();
      resolve({ ...answer, sentBeforeAnswer, sent, finished });
    };
    socket.on('data', (data) => {
      if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
      received = Buffer.concat([received, data]);
      const end = received.indexOf('\r\n\r\n');
      if (answer || end < 0) return;
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length']);
      if (received.length < end + 4 + length) return;
      const text = received.subarray(end + 4, end + 4 + length).toString('utf8');
      answer = { status: Number(statusLine.split(' ')[1]), headers, body: parseJson(text) };
      settle();
    });
    // The server cutting the upload off (a reset, a write after its close) is what these tests wait for.
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      if (!answer) reject(new Error(`the connection closed before an answer, after ${sent} bytes`));
      settle();
    });

    const write = async (bytes: Buffer) => {
      if (closed) return false;
      if (!socket.write(bytes)) await new Promise((drained) => (socket.once('drain', drained), socket.once('close', drained)));
      return !closed;
    };
    const chunk = async (bytes: Buffer) => {
      // An empty chunk would end a chunked body.
      if (bytes.length === 0) return !closed;
      if (body.declaredLength) return write(bytes);
      return write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]));
    };

    void (async () => {
      if (!(await write(Buffer.from(`${requestHead}\r\n\r\n`)))) return;
      if (!(await chunk(head))) return;
      sent += head.length;
      for (let left = body.filler; left > 0; left -= CHUNK.length) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        if (!(await chunk(piece))) return;
        sent += piece.length;
      }
      if (!(await chunk(tail))) return;
      sent += tail.length;
      if (!body.declaredLength && !(await write(Buffer.from('0\r\n\r\n')))) return;
      finished = true;
      settle();
    })();
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A multipart body whose one file (or one text field, with `field`) is `size` bytes. */
function multipart(size: number, options: { fields?: Record<string, string>; field?: string } = {}): Body {
  const fields = Object.entries(options.fields ?? {}).map(([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const open = options.field
    ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${options.field}"\r\n\r\n`
    : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  return { contentType: `multipart/form-data; boundary=${BOUNDARY}`, head: fields.join('') + open, filler: size, tail: `\r\n--${BOUNDARY}--\r\n` };
}

const json = (size: number, declaredLength = false): Body => ({ contentType: 'application/json', head: '{"data":{"title":"', filler: size, tail: '"}}', declaredLength });
const form = (size: number): Body => ({ contentType: 'application/x-www-form-urlencoded', head: 'name=', filler: size, tail: '', declaredLength: false });

let t: TestApp;
let user: TestUser;
let cookie: Record<string, string>;
let uploadUrl: URL;

beforeAll(async () => {
  t = await startTestApp();
  ({ user } = await filesWorkspace(t, 'uploader@example.com', 'limits'));
  cookie = { cookie: `svc-session=${user.cookie}` };
  const ticket = await t.request('POST', '/api/workspaces/limits/files', {
    as: user.as,
    body: { clientPayload: JSON.stringify({ surfaceSlug: 'files', parentFolderId: null, name: 'small.txt', size: 1000, contentType: 'text/plain' }) },
  });
  expect(ticket.status, ticket.text).toBe(200);
  uploadUrl = new URL(ticket.body.uploadUrl);
});

afterAll(async () => {
  await t?.close();
});

/**
 * The uploader got its 413 before it had sent its body, and could never
 * send all of it: the server stopped reading near the limit (what it took
 * past it is what the buffers between the two ends hold, a few MB).
 */
function expectRefusedWhileSending(result: Upload, limit: number) {
  expect(result.status, JSON.stringify(result.body)).toBe(413);
  expect(result.body).toMatchObject({ error: { code: 'payload_too_large' }, requestId: expect.any(String) });
  expect(result.sentBeforeAnswer).toBeLessThan(limit + PAST_THE_LIMIT);
  expect(result.finished).toBe(false);
  expect(result.sent).toBeLessThan(limit + PAST_THE_LIMIT / 2);
}

describe('a body past its limit is refused while it is still arriving', () => {
  const cases: Array<{ name: string; method: string; path: () => string; limit: number; body: (filler: number) => Body }> = [
    { name: 'a JSON body (POST /rows)', method: 'POST', path: () => '/api/workspaces/limits/rows', limit: JSON_BODY_LIMIT, body: (n) => json(n) },
    { name: 'a JSON body that declares its length', method: 'POST', path: () => '/api/workspaces/limits/rows', limit: JSON_BODY_LIMIT, body: (n) => ({ ...json(n), declaredLength: true }) },
    {
      name: 'a proxy upload (multipart)',
      method: 'POST',
      path: () => '/api/workspaces/limits/files/proxy-upload',
      limit: FILE_LIMITS.proxyUploadBytes,
      body: (n) => multipart(n, { fields: { surface_slug: 'files', parent_folder_id: '' } }),
    },
    {
      name: 'a multipart text field (the whole multipart body is limited, not only its file)',
      method: 'POST',
      path: () => '/api/workspaces/limits/files/proxy-upload',
      limit: FILE_LIMITS.proxyUploadBytes,
      body: (n) => multipart(n, { field: 'surface_slug' }),
    },
    { name: 'a new version of a file (multipart)', method: 'POST', path: () => '/api/workspaces/limits/files/fil_any/versions', limit: FILE_LIMITS.proxyUploadBytes, body: (n) => multipart(n) },
    { name: 'a doc image (multipart)', method: 'POST', path: () => '/api/workspaces/limits/upload', limit: DOC_IMAGE_MAX_BYTES, body: (n) => multipart(n) },
    { name: 'an avatar (multipart)', method: 'POST', path: () => '/api/me/avatar', limit: AVATAR_MAX_BYTES, body: (n) => multipart(n) },
    { name: 'a support screenshot (multipart)', method: 'POST', path: () => '/api/support/upload', limit: SCREENSHOT_MAX_BYTES, body: (n) => multipart(n) },
    { name: 'a CSV import (multipart)', method: 'POST', path: () => '/api/workspaces/limits/rows/import', limit: FILE_LIMITS.proxyUploadBytes, body: (n) => multipart(n) },
    { name: 'the local store’s one-shot upload URL (its declared size)', method: 'PUT', path: () => uploadUrl.pathname + uploadUrl.search, limit: 1000, body: (n) => ({ contentType: 'text/plain', head: '', filler: n, tail: '' }) },
    { name: 'a form of the local checkout page (16 KB)', method: 'POST', path: () => '/billing/checkout/unknown-token', limit: 16 * 1024, body: (n) => form(n) },
    { name: 'the OAuth consent form', method: 'POST', path: () => '/oauth/authorize', limit: JSON_BODY_LIMIT, body: (n) => form(n) },
  ];

  for (const { name, method, path, limit, body } of cases) {
    it(name, async () => {
      const result = await upload(t, method, path(), body(limit + PAST_THE_LIMIT), cookie);
      expectRefusedWhileSending(result, limit);
    }, 120_000);
  }

  it('a body within the limit is still read whole and answered on a connection that stays open', async () => {
    const result = await upload(t, 'POST', '/api/workspaces/limits/rows', json(1024 * 1024), cookie);
    expect(result.status).toBe(200);
    expect(result.body.data.title).toHaveLength(1024 * 1024);
    expect(result.finished).toBe(true);
    expect(result.headers.connection).not.toBe('close');
  });
});
