import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * A package loaded the first time a code path needs it rather than when the
 * server starts: the drivers of services a deployment may not configure
 * (Postgres, Redis, SMTP), the heavy tools of rare requests (jsdom for
 * sanitising markup) and the parsers of features an empty server does not
 * touch (zip archives, CSV, file names' types). The
 * drivers cost 10 to 90 MB resident where nothing uses them, the parsers
 * tens of milliseconds of every start (docs/PERFORMANCE.md, "Footprint").
 * Synchronous, so a synchronous caller keeps its shape; `require` loads the
 * CommonJS build each of these packages ships, and none of them is also
 * imported as an ES module (which would make it a second copy).
 */
export function whenNeeded<T>(name: 'pg' | 'ioredis' | 'nodemailer' | 'jsdom' | 'dompurify' | 'yazl' | 'yauzl' | 'csv-parse' | 'csv-stringify/sync' | 'mime-types'): T {
  return load(name) as T;
}
