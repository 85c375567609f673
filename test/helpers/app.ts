import fs from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../../src/app';
import { createServices } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import type { App } from '../../src/http/types';
import { ManualClock, type Clock } from '../../src/lib/clock';
import type { Services } from '../../src/domain/services';
import { freshDataStore } from './database';

export type TestApp = {
  app: App;
  services: Services;
  /** Base URL of the listening server, e.g. http://127.0.0.1:54321 */
  url: string;
  dataDir: string;
  /** fetch against the real server, JSON in and out. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Mails written to the outbox (when no SMTP_URL is configured). */
  outbox(): Promise<Array<{ to: string; subject: string; text: string; html?: string }>>;
  close(): Promise<void>;
};

export type RequestOptions = {
  body?: unknown;
  /** Sent verbatim (for malformed JSON tests); wins over `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** A session cookie value or a bearer token. */
  as?: Credential;
};

export type Credential = { cookie: string } | { bearer: string };

export type TestResponse = {
  status: number;
  headers: Headers;
  body: any;
  text: string;
};

export type TestAppOptions = {
  env?: Record<string, string>;
  clock?: Clock;
  /** Reuse a data dir (restart tests); a fresh copy of the template otherwise. */
  dataDir?: string;
  databaseUrl?: string;
  /** Test-only routes, registered before the server listens. */
  routes?: (app: App, services: Services) => void | Promise<void>;
  /** The server's logger, for a test that reads its lines; silent otherwise (TEST_LOG_LEVEL to stderr). */
  log?: pino.Logger;
};

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp & { store: { dataDir: string; databaseUrl?: string; dispose(): Promise<void> } }> {
  const store = options.dataDir
    ? { dataDir: options.dataDir, databaseUrl: options.databaseUrl, dispose: async () => {} }
    : await freshDataStore();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: store.dataDir,
    LOG_LEVEL: 'silent',
    COOKIE_SECURE: 'false',
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
    ...options.env,
  });
  const { services, close: closeServices } = await createServices(config, {
    // To stderr: a bench server's stdout carries its address line.
    log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
    clock: options.clock,
    limitsKeyPrefix: `trellis-test:${path.basename(store.dataDir)}:`,
  });
  const app = await buildApp(services);
  await options.routes?.(app, services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // A test that names its public URL (CORS, links) keeps it; others get the address the server listens on.
  if (!options.env?.PUBLIC_URL) services.config.publicUrl = url;

  const request = async (method: string, urlPath: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.as && 'cookie' in opts.as) headers.cookie = `svc-session=${opts.as.cookie}`;
    if (opts.as && 'bearer' in opts.as) headers.authorization = `Bearer ${opts.as.bearer}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    const response = await fetch(url + urlPath, { method, headers, body, redirect: 'manual' });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  const outbox = async () => {
    const file = path.join(store.dataDir, 'outbox.jsonl');
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  };

  return {
    app,
    services,
    url,
    dataDir: store.dataDir,
    store,
    request,
    outbox,
    close: async () => {
      await app.close();
      await closeServices();
    },
  };
}

export { ManualClock };
