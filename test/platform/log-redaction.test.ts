import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../../src/bootstrap';

describe('logs never carry credentials', () => {
  it('redacts tokens in query strings and token paths', () => {
    expect(redactUrl('/api/auth?token=abc123')).toBe('/api/auth?token=[redacted]');
    expect(redactUrl('/x?a=1&code=654321&b=2')).toBe('/x?a=1&code=[redacted]&b=2');
    expect(redactUrl('/api/invites/s3cr3t')).toBe('/api/invites/[redacted]');
    expect(redactUrl('/api/org-invites/s3cr3t?x=1')).toBe('/api/org-invites/[redacted]?x=1');
    expect(redactUrl('/api/orgs/acme/invites/inv_1')).toBe('/api/orgs/acme/invites/inv_1');
  });

  it('the process logger drops authorization and cookie headers and token query values', () => {
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((out += chunk), done()) });
    const log = createLogger('info', sink);
    log.info({ req: { method: 'GET', url: '/api/auth?token=magic-secret', headers: { authorization: 'Bearer svc_live_secret', cookie: 'svc-session=s' }, socket: {} } }, 'incoming request');
    expect(out).toContain('/api/auth?token=[redacted]');
    expect(out).not.toMatch(/magic-secret|svc_live_secret|svc-session=s/);
  });
});
