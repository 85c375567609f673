import type { Config } from '../config';

/**
 * Origins whose pages may send the session cookie and read the answer: the
 * app's own (`PUBLIC_URL`) and `CORS_ORIGINS`. Read on every request, since
 * the public URL is known only once the server listens in some setups (tests).
 */
export function isCredentialedOrigin(config: Pick<Config, 'publicUrl' | 'corsOrigins'>, origin: string | undefined): boolean {
  if (!origin) return false;
  return origin === originOf(config.publicUrl) || config.corsOrigins.includes(origin);
}

// Every request asks: parse the public URL once per value, not once per request.
let publicOrigin: { url: string; origin: string } | null = null;
function originOf(url: string): string {
  if (publicOrigin?.url !== url) publicOrigin = { url, origin: new URL(url).origin };
  return publicOrigin.origin;
}

/**
 * Whether a request may be signed in by the session cookie. Browsers name
 * the page's origin in `Origin` on every cross-origin request and on every
 * websocket handshake; CORS only keeps other sites from reading answers, so
 * without this a page on a sibling subdomain (same site: `SameSite=Lax`
 * sends the cookie) could still open the sync socket as the person, or send
 * a write that needs no preflight. The cookie counts when there is no
 * `Origin` (links, same-origin reads, non-browser clients), when the origin
 * is credentialed (above), or when it names the host the request was sent
 * to: the app's own page under another name this person uses.
 */
export function mayUseSessionCookie(config: Pick<Config, 'publicUrl' | 'corsOrigins'>, headers: { origin?: string | null; host?: string | null }): boolean {
  const origin = headers.origin ?? undefined;
  if (origin === undefined) return true;
  if (isCredentialedOrigin(config, origin)) return true;
  try {
    return Boolean(headers.host) && new URL(origin).host === headers.host!.toLowerCase();
  } catch {
    return false;
  }
}
