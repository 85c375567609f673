/**
 * A typed client for the Trellis REST API. Its types are generated from the
 * server's OpenAPI description (`schema.ts`, `npm run client:generate`; a
 * test keeps them equal to what the server serves), so a route, a parameter
 * or a response that changes on the server changes here or fails the build.
 *
 * Every call answers `{ data, error, response }`: `error` is the documented
 * error body of the status the server answered (`Error`, `RateLimited`,
 * `OverLimit`, ...), typed per route, never a thrown exception for an HTTP
 * status. A 429 is retried after its `Retry-After` (at most `retries`
 * times); everything else is returned as it came.
 */
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths };
export type Schemas = components['schemas'];
export type Row = Schemas['Row'];
export type ErrorBody = Schemas['Error'];
export type RateLimited = Schemas['RateLimited'];

export type TrellisClientOptions = {
  /** The server's origin, e.g. `https://trellis.example.com`. */
  baseUrl: string;
  /** An API key (`svc_live_...`) or an OAuth access token. */
  apiKey?: string;
  /** How many times a 429 is retried after its `Retry-After` (default 3). */
  retries?: number;
  /** The longest wait for one retry, in ms (default 60,000): a longer `Retry-After` is answered as is. */
  maxRetryDelayMs?: number;
  fetch?: (request: Request) => Promise<Response>;
  /** How to wait before a retry (tests move a clock instead). */
  sleep?: (ms: number) => Promise<void>;
  headers?: ClientOptions['headers'];
};

export type TrellisClient = Client<paths, 'application/json'> & {
  /** Every row of a listing, page after page (`nextCursor`), with the same query as `GET /rows`. */
  rows(workspace: string, query?: RowsQuery): AsyncGenerator<Row, void, undefined>;
  /**
   * The workspace's live events (`GET /subscribe`, Server-Sent Events) as
   * they happen; after `lastEventId`, what was missed first. Ends when
   * `signal` aborts.
   */
  events(workspace: string, options?: { lastEventId?: string; signal?: AbortSignal }): AsyncGenerator<LiveEvent, void, undefined>;
};

export type EventRecord = Schemas['Event'];
export type LiveEvent = { id: string; event: string; data: EventRecord };

export type RowsQuery = NonNullable<paths['/api/workspaces/{slug}/rows']['get']['parameters']['query']>;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createTrellisClient(options: TrellisClientOptions): TrellisClient {
  const retries = options.retries ?? 3;
  const maxDelay = options.maxRetryDelayMs ?? 60_000;
  const sleep = options.sleep ?? sleepFor;
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const retrying = async (request: Request): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      // A body can be read once: each attempt sends a copy.
      const response = await send(attempt < retries ? request.clone() : request);
      if (response.status !== 429 || attempt >= retries) return response;
      const delay = retryDelayMs(response.headers.get('retry-after'), attempt);
      if (delay > maxDelay) return response;
      await response.body?.cancel();
      await sleep(delay);
    }
  };
  // JSON bodies: routes that also answer CSV or Markdown are typed by their JSON answer.
  const client = createFetchClient<paths, 'application/json'>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retrying,
    querySerializer: serializeQuery,
    headers: { ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), ...(options.headers as Record<string, string> | undefined) },
  });
  async function* rows(workspace: string, query: RowsQuery = {}): AsyncGenerator<Row, void, undefined> {
    let after: string | undefined = query.after;
    for (;;) {
      const { data, error, response } = await client.GET('/api/workspaces/{slug}/rows', { params: { path: { slug: workspace }, query: { ...query, after } } });
      if (error !== undefined || !data) throw new TrellisError(response.status, error);
      yield* data.rows;
      if (!data.nextCursor) return;
      after = data.nextCursor;
    }
  }
  async function* events(workspace: string, { lastEventId, signal }: { lastEventId?: string; signal?: AbortSignal } = {}): AsyncGenerator<LiveEvent, void, undefined> {
    const { error, response } = await client.GET('/api/workspaces/{slug}/subscribe', {
      params: { path: { slug: workspace } },
      headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      parseAs: 'stream',
      signal,
    });
    if (error !== undefined || !response.body) throw new TrellisError(response.status, error);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    // An aborted fetch does not always end a body already being read: cancel it.
    const stop = () => void reader.cancel().catch(() => {});
    signal?.addEventListener('abort', stop, { once: true });
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read().catch((error) => (signal?.aborted ? { value: undefined, done: true as const } : Promise.reject(error)));
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (frame) yield frame;
        }
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      reader.releaseLock();
    }
  }
  return Object.assign(client, { rows, events });
}

/** One `text/event-stream` frame; null for comments (`: ping`) and frames without data. */
function parseFrame(frame: string): LiveEvent | null {
  let id = '';
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  return { id, event, data: JSON.parse(data.join('\n')) as EventRecord };
}

/** Thrown by the iterating helpers (which cannot return an error result); carries the documented body. */
export class TrellisError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(messageOf(body) ?? `HTTP ${status}`);
    this.name = 'TrellisError';
  }
}

function messageOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = body as { message?: unknown; error?: { message?: unknown } };
  if (typeof value.error?.message === 'string') return value.error.message;
  return typeof value.message === 'string' ? value.message : undefined;
}

/**
 * The server's query form: nested objects as `filter[status][in]=a,b`
 * (deepObject, any depth, which openapi-fetch's own serializer refuses),
 * arrays as repeated keys.
 */
export function serializeQuery(query: Record<string, unknown>): string {
  const parts: string[] = [];
  const add = (key: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) for (const item of value) add(key, item);
    else if (typeof value === 'object') for (const [sub, inner] of Object.entries(value)) add(`${key}[${sub}]`, inner);
    else parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  };
  for (const [key, value] of Object.entries(query)) add(key, value);
  return parts.join('&');
}

/** `Retry-After` in seconds or as an HTTP date; without one, 1 s doubling per attempt. */
function retryDelayMs(header: string | null, attempt: number): number {
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const at = Date.parse(header);
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  return 1000 * 2 ** attempt;
}
