/**
 * The REST client: same-origin fetch with the session cookie, JSON in and
 * out, and every failure turned into an ApiError the UI can show (the
 * server's `{ error: { code, message } }`, the 429/402 bodies, or "you are
 * offline" when the request never reached it).
 */
import { pageIsUncontrolled, rememberUncontrolledRead } from './first-visit';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** True when the request never reached the server (offline, server down). */
  get isNetwork(): boolean {
    return this.status === 0;
  }
}

type Json = Record<string, unknown> | unknown[] | null;

export async function api<T = any>(method: string, path: string, body?: Json | FormData): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  let response: Response;
  const uncontrolled = method === 'GET' && pageIsUncontrolled();
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', navigator.onLine ? 'The server could not be reached.' : 'You are offline.');
  }
  const text = await response.text();
  let parsed: any = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) {
    if (uncontrolled) rememberUncontrolledRead(path, response, text);
    return parsed as T;
  }
  throw errorFrom(response.status, parsed);
}

function errorFrom(status: number, body: any): ApiError {
  if (body?.error && typeof body.error === 'object') {
    return new ApiError(status, String(body.error.code ?? 'error'), String(body.error.message ?? `Request failed (${status}).`), body.error.details);
  }
  if (body && typeof body.code === 'string') {
    // 429 rate_limited and 402 over_limit keep their documented bodies.
    return new ApiError(status, body.code, String(body.message ?? `Request failed (${status}).`), body);
  }
  return new ApiError(status, 'error', status === 503 ? 'The server is unavailable.' : `Request failed (${status}).`);
}

/** The canonical workspace path, never ambiguous across organisations. */
export function workspacePath(orgSlug: string, slug: string, suffix = ''): string {
  return `/api/orgs/${encodeURIComponent(orgSlug)}/workspaces/${encodeURIComponent(slug)}${suffix}`;
}

/**
 * The server names its own URLs with PUBLIC_URL; the browser keeps to the
 * origin it loaded the app from (the same server under the name this person
 * uses, and the only origin the page's CSP lets it talk to).
 */
export function onThisOrigin(url: string): string {
  try {
    const parsed = new URL(url, window.location.origin);
    return parsed.pathname + parsed.search + parsed.hash;
  } catch {
    return url;
  }
}

/** A message for any thrown value, for toasts and inline errors. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
