/**
 * The web app's top-level paths that are pages of their own, and the
 * server's own prefixes. The app reads `/{orgSlug}` as an organisation, so
 * no organisation may take one of these slugs: it would be shadowed by the
 * page (or the API) and unreachable. Browser-safe: the web app imports it.
 */
export const APP_PAGE_SLUGS = ['signin', 'settings', 'invites', 'org-invites'] as const;

/** Prefixes the server keeps for itself (src/http/web-app.ts) and the bundler's assets directory. */
const SERVER_PATH_SLUGS = ['api', 'share', 'oauth', 'assets', 'well-known', 'openapi'] as const;

export const RESERVED_ORG_SLUGS: ReadonlySet<string> = new Set([...APP_PAGE_SLUGS, ...SERVER_PATH_SLUGS]);
