/**
 * How a presented credential reads: the session cookie's name and the
 * prefixes that tell an API key from an OAuth access token. The domain mints
 * them (src/domain/keys.ts, src/domain/oauth.ts) and src/access/callers.ts
 * resolves them, so they live below both.
 */
export const SESSION_COOKIE = 'svc-session';
export const API_KEY_PREFIX = 'svc_live_';
export const OAUTH_ACCESS_TOKEN_PREFIX = 'oat_';
