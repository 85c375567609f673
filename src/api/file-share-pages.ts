import { z } from 'zod';
import { sharedFile } from '../domain/file-shares';
import { FILE_LIMITS } from '../domain/files';
import { isTextLike } from '../files/content-types';
import { htmlResponse } from '../http/html-page';
import type { App } from '../http/types';
import type { Services } from '../domain/services';
import { sendBytes } from './files';
import { ErrorBody, flagOn, QueryFlag } from '../model/schemas/common';

/**
 * The public side of share links (SPEC "Authentication" 9): a small page
 * at `/share/files/{token}` (the name, size and type; an image or video
 * shown inline, a text file's start in a preview, a download link) and the
 * bytes at `/share/files/{token}/raw`. No account is needed; an unknown or
 * revoked token, or an archived file, is 404. Nothing is cached by shared
 * caches (a revoked link must stop working), no referrer leaves the page
 * (the URL is the credential), and search engines are asked not to index
 * it. The process logger redacts the token from request URLs.
 * Not operations: one is an HTML page, the other streamed bytes.
 */

const TokenParams = z.object({ token: z.string().min(1).max(200) });
const RawQuery = z.strictObject({ download: QueryFlag.optional().describe('`1`: `Content-Disposition: attachment`') });

const PAGE_CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function humanSize(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function publicHeaders(reply: { header(name: string, value: string): unknown }) {
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-robots-tag', 'noindex, nofollow');
  reply.header('cache-control', 'private, no-store');
}

export async function fileSharePageRoutes(app: App, services: Services) {
  app.get(
    '/share/files/:token',
    {
      schema: {
        summary: 'Public page of a shared file',
        description: 'HTML: the file’s name, size and type, the image or video inline, the start of a text file, and a download link. 404 when the link is unknown or revoked, or the file archived.',
        tags: ['files'],
        params: TokenParams,
        response: { 200: htmlResponse('The page'), 404: ErrorBody },
      },
      config: { auth: 'none', metered: false },
    },
    async (request, reply) => {
      const file = await sharedFile(services, request.params.token);
      const raw = `${request.params.token}/raw`;
      let body = '';
      if (file.contentType.startsWith('image/')) body = `<img src="${raw}" alt="${escapeHtml(file.name)}">`;
      else if (file.contentType.startsWith('video/')) body = `<video src="${raw}" controls></video>`;
      else if (file.contentType.startsWith('audio/')) body = `<audio src="${raw}" controls></audio>`;
      else if (isTextLike(file.contentType)) {
        const blob = await services.blobs.get(file.blobKey);
        if (blob) {
          const chunks: Buffer[] = [];
          let length = 0;
          for await (const chunk of blob.body as AsyncIterable<Buffer>) {
            chunks.push(chunk);
            length += chunk.byteLength;
            if (length >= FILE_LIMITS.previewBytes) break;
          }
          blob.body.destroy();
          const text = Buffer.concat(chunks).subarray(0, FILE_LIMITS.previewBytes).toString('utf8');
          body = `<pre>${escapeHtml(text)}${file.size > FILE_LIMITS.previewBytes ? '\n…' : ''}</pre>`;
        }
      }
      const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>${escapeHtml(file.name)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem;word-break:break-word}img,video{max-width:100%;height:auto;border:1px solid #ddd}pre{background:#f6f6f6;padding:1rem;overflow:auto;white-space:pre-wrap;word-break:break-word}.meta{color:#666}a.download{display:inline-block;margin:1rem 0;padding:.5rem 1rem;background:#222;color:#fff;text-decoration:none;border-radius:4px}</style>
</head><body>
<h1>${escapeHtml(file.name)}</h1>
<p class="meta">${escapeHtml(humanSize(file.size))} · ${escapeHtml(file.contentType)}</p>
<p><a class="download" href="${raw}?download=1">Download</a></p>
${body}
</body></html>`;
      publicHeaders(reply);
      reply.header('content-security-policy', PAGE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('content-type', 'text/html; charset=utf-8');
      return html;
    },
  );

  app.get(
    '/share/files/:token/raw',
    {
      schema: {
        summary: 'The bytes of a shared file',
        description: 'Inline (`download=1` for an attachment), `nosniff`, sandboxing CSP, not cached by shared caches. 404 when the link is unknown or revoked.',
        tags: ['files'],
        params: TokenParams,
        querystring: RawQuery,
        response: { 200: z.string().describe('The bytes'), 304: z.null(), 404: ErrorBody },
      },
      config: { auth: 'none', metered: false },
    },
    async (request, reply) => {
      const file = await sharedFile(services, request.params.token);
      const blob = await services.blobs.get(file.blobKey);
      if (!blob) return reply.callNotFound();
      publicHeaders(reply);
      return sendBytes(request, reply, { file, body: blob.body, size: blob.size, contentType: file.contentType }, {
        disposition: flagOn(request.query.download) ? 'attachment' : 'inline',
        cache: 'private, no-store',
        etag: file.sha256,
      });
    },
  );
}
