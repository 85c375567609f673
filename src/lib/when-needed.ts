import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A package loaded the first time a code path needs it rather than when the
 * server starts: the drivers of services a deployment may not configure
 * (Postgres, Redis, SMTP) and the heavy tools of rare requests (jsdom for
 * sanitising markup). Each costs 10 to 90 MB resident and up to seconds of
 * start time where nothing uses it (docs/PERFORMANCE.md, "Footprint").
 * Synchronous, so a synchronous caller keeps its shape; the packages named
 * here are CommonJS, which `require` loads as they are.
 */
export function whenNeeded<T>(name: 'pg' | 'ioredis' | 'nodemailer' | 'jsdom' | 'dompurify'): T {
  return load(name) as T;
}
