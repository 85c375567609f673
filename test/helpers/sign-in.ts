import type { TestApp } from './app';

/** Extracts the newest magic-link token mailed to an address from the outbox. */
export async function latestMagicToken(t: Pick<TestApp, 'outbox'>, email: string): Promise<string> {
  const mails = (await t.outbox()).filter((m) => m.to === email.toLowerCase());
  const text = mails.at(-1)?.text ?? '';
  const match = /token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no magic link mailed to ${email}`);
  return decodeURIComponent(match[1]!);
}

/** Signs in through the real magic-link flow and returns the session cookie value. */
export async function signIn(t: TestApp, email: string): Promise<{ cookie: string; orgSlug: string; location: string }> {
  const sent = await t.request('POST', '/api/auth', { body: { email } });
  if (sent.status !== 200) throw new Error(`POST /api/auth answered ${sent.status}: ${sent.text}`);
  const token = await latestMagicToken(t, email);
  const redeemed = await t.request('GET', `/api/auth?token=${encodeURIComponent(token)}`);
  if (redeemed.status !== 302) throw new Error(`GET /api/auth answered ${redeemed.status}: ${redeemed.text}`);
  const setCookie = redeemed.headers.get('set-cookie') ?? '';
  const cookie = /svc-session=([^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error('no session cookie set');
  const location = redeemed.headers.get('location') ?? '';
  return { cookie, orgSlug: location.split('/')[1] ?? '', location };
}
