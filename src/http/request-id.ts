import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a caller's request id when it is safe to log and return; otherwise mint one. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming)) return incoming;
  return `req_${randomUUID().replace(/-/g, '')}`;
}
