/**
 * A cookie the web app can read (the session cookie itself is HttpOnly)
 * that says whether this browser holds a live session. The server sets or
 * clears it on every page load (src/http/web-app.ts), so a signed-out
 * visitor's app never asks `/api/me` only to be told 401. Its value says
 * nothing about who: it is `1` or absent. Browser-safe: the web app reads it.
 */
export const SIGNED_IN_COOKIE = 'svc-signed-in';
