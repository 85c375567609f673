import type { FastifyReply } from 'fastify';

/**
 * Headers for the few pages the server renders itself (local checkout,
 * portal, tracker): no scripts at all, forms post only back here, never
 * framed, never cached, and the token in the URL never leaves as a referrer.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** Sends a page from `renderPage` with those headers. */
export function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}
