import path from 'node:path';
import { z } from 'zod';

/**
 * The only reader of `process.env`. Every variable is checked at start so a
 * bad value stops the process with a message naming it, instead of failing
 * later inside a request.
 */

const booleanString = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Other origins whose pages may call the API with the session cookie (docs: README, "Configuration"). */
  CORS_ORIGINS: z
    .string()
    .transform((value, ctx) => {
      const origins: string[] = [];
      for (const entry of value.split(',').map((part) => part.trim()).filter(Boolean)) {
        const origin = originOf(entry);
        if (!origin) {
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not an origin: write scheme://host[:port] (http or https), no path, no wildcard` });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    })
    .optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** Embedded database only: run it in a thread of its own (src/persistence/pglite-thread.ts; default false until measured on a quiet machine, docs/PERFORMANCE.md). */
  EMBEDDED_DATABASE_THREAD: booleanString.optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** Namespaces every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9:_.-]{1,64}$/, 'letters, digits and : _ . - only (at most 64)').default('trellis:'),
  /** With Redis: how long another instance's presence entries count without a refresh (it refreshes them every third of this). */
  PRESENCE_TTL_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** When set, /metrics asks for `Authorization: Bearer <token>`. */
  METRICS_TOKEN: z.string().min(16).optional(),
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: booleanString.optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).default('Trellis <no-reply@trellis.local>'),
  SIGNUP_MODE: z.enum(['open', 'waitlist']).default('open'),
  /** OpenID Connect sign-in (docs/OPERATIONS.md): all of issuer, client id and secret, or none. */
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  OIDC_CLIENT_ID: z.string().min(1).max(500).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).max(2000).optional(),
  OIDC_ALLOWED_DOMAINS: z
    .string()
    .transform((value, ctx) => {
      const domains = value.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
      for (const domain of domains) {
        if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/.test(domain)) {
          ctx.addIssue({ code: 'custom', message: `"${domain}" is not a domain: write example.com, comma-separated, no @ or wildcard` });
          return z.NEVER;
        }
      }
      return domains;
    })
    .optional(),
  OIDC_NAME: z.string().trim().min(1).max(60).optional(),
  COOKIE_SECURE: booleanString.optional(),
  WEBHOOK_ALLOW_PRIVATE: booleanString.default(false),
  WEBHOOK_SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'must be 32 bytes as 64 hex digits or base64')
    .optional(),
  API_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(300),
  FORM_SUBMISSIONS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Compaction of a document's update log is due after this many updates since the last one (docs/SYNC.md). */
  COMPACT_AFTER_UPDATES: z.coerce.number().int().min(10).max(1_000_000).default(5_000),
  /** A document whose stored state would take more heap than this to load is refused, not loaded (docs/SYNC.md). */
  DOCUMENT_LOAD_BUDGET_MB: z.coerce.number().int().min(1).max(65_536).default(1_024),
  /** Sync ceilings (docs/LIMITS.md): past one, the writer or connection is refused with a clear error, never the process. */
  SYNC_MAX_CONNECTIONS_PER_DOCUMENT: z.coerce.number().int().min(1).max(1_000_000).default(500),
  SYNC_MAX_DOCUMENT_BYTES: z.coerce.number().int().min(1024).max(2 ** 34).default(64 * 2 ** 20),
  SYNC_MAX_UPDATE_BYTES: z.coerce.number().int().min(1024).max(2 ** 30).default(8 * 2 ** 20),
  SYNC_MAX_LOADED_DOCUMENTS: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** Guards the admin routes (`POST /api/admin/backup`) the admin CLI calls while the server runs: `Authorization: Bearer <token>`. Unset: those routes answer 401. */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** Scheduled backups (docs/OPERATIONS.md): archives are written into this directory. */
  BACKUP_DIR: z.string().min(1).optional(),
  /** How often a scheduled backup runs: a number and a unit, m, h or d (e.g. `24h`). */
  BACKUP_EVERY: z
    .string()
    .regex(/^[1-9][0-9]{0,4}[mhd]$/, 'write a number and a unit m, h or d, e.g. 24h')
    .transform((v) => Number(v.slice(0, -1)) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[v.slice(-1) as 'm' | 'h' | 'd'])
    .optional(),
  /** How many scheduled archives are kept in BACKUP_DIR; older ones are removed after each success. */
  BACKUP_KEEP: z.coerce.number().int().min(1).max(10_000).default(7),
  /** Recovery tests only (src/lib/failpoints.ts). */
  TRELLIS_FAILPOINTS: z.string().max(1000).optional(),
  /** Prints when each phase of the start ended, to stderr once the server listens (src/lib/start-marks.ts). */
  TRELLIS_START_TRACE: booleanString.optional(),
});

export type Config = {
  port: number;
  host: string;
  publicUrl: string;
  /** Origins besides PUBLIC_URL's whose pages may send credentialed requests (CORS with credentials). */
  corsOrigins: string[];
  dataDir: string;
  databaseUrl: string | undefined;
  /** Embedded PGlite in a thread of its own (src/persistence/pglite-thread.ts). */
  embeddedDatabaseThread: boolean;
  redisUrl: string | undefined;
  redisPrefix: string;
  /** Presence entries of an instance that stopped refreshing them are ignored after this long (src/sync/presence.ts). */
  presenceTtlSeconds: number;
  /** Guards /metrics when set (docs/SCALING.md). */
  metricsToken: string | undefined;
  s3:
    | {
        endpoint: string | undefined;
        bucket: string;
        region: string;
        accessKeyId: string | undefined;
        secretAccessKey: string | undefined;
        forcePathStyle: boolean;
      }
    | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  signupMode: 'open' | 'waitlist';
  /** OpenID Connect sign-in next to magic links; undefined when not configured. */
  oidc:
    | {
        issuer: string;
        clientId: string;
        clientSecret: string;
        /** Lower-case e-mail domains that may sign in; empty: any. */
        allowedDomains: string[];
        /** The button says "Sign in with <name>". */
        name: string;
      }
    | undefined;
  cookieSecure: boolean;
  webhookAllowPrivate: boolean;
  /** Encrypts webhook signing secrets at rest; unset: a key file in DATA_DIR (docs/WEBHOOKS.md). */
  webhookSecretKey: string | undefined;
  /** Burst limit on writes per key or session (the spec's 300 per minute unless raised). */
  apiWritesPerMinute: number;
  /** Answers one address may send to one public form in a minute (docs/TABLES.md "Forms"). */
  formSubmissionsPerMinute: number;
  logLevel: string;
  /** TRELLIS_START_TRACE: print the start's phases (src/lib/start-marks.ts). */
  startTrace: boolean;
  /** Updates since the last compaction of a document that make the next one due. */
  compactAfterUpdates: number;
  /** Estimated heap a document load may take, in bytes; a larger one is refused. */
  documentLoadBudgetBytes: number;
  /** Sync ceilings, per instance where they count (src/sync/ceilings.ts). */
  syncCeilings: SyncCeilingsConfig;
  /** Failpoints armed at start (recovery tests); empty in production. */
  failpoints: string | undefined;
  /** Bearer token of the admin routes; unset: they refuse every caller. */
  adminToken: string | undefined;
  /** Scheduled backups: where, how often (ms), how many kept; undefined when BACKUP_DIR is unset. */
  backup: { dir: string; everyMs: number; keep: number } | undefined;
};

export type SyncCeilingsConfig = {
  /** Connections to one document on this instance; the next is closed (4429 `too_many_connections`). */
  connectionsPerDocument: number;
  /** A document's encoded state; an update that would take it past is refused (4413 / 413). */
  documentBytes: number;
  /** One update (a sync message, a REST change); a larger one is refused (4413 / 413). */
  updateBytes: number;
  /** Documents held in memory by this process; idle ones are unloaded least recently used first. */
  loadedDocuments: number;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads configuration from an environment map (defaults to `process.env`). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'environment');
        // Secrets are named, never echoed: a near-miss key is still a key.
        const got = /SECRET|PASSWORD|TOKEN/.test(name) ? '[redacted]' : JSON.stringify(present[name] ?? null);
        return `${name}: ${issue.message} (got ${got})`;
      }),
    );
  }
  const e = parsed.data;
  const oidcSet = { OIDC_ISSUER: e.OIDC_ISSUER, OIDC_CLIENT_ID: e.OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: e.OIDC_CLIENT_SECRET };
  const oidcMissing = Object.entries(oidcSet).filter(([, v]) => v === undefined).map(([k]) => k);
  const oidcExtras = (['OIDC_ALLOWED_DOMAINS', 'OIDC_NAME'] as const).filter((k) => e[k] !== undefined);
  // Half a sign-in setup would show a button that cannot work: refuse it at start.
  if (oidcMissing.length > 0 && (oidcMissing.length < 3 || oidcExtras.length > 0)) {
    throw new ConfigError(oidcMissing.map((name) => `${name}: required when any OIDC_ variable is set (OpenID Connect sign-in needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET)`));
  }
  if (e.BACKUP_EVERY !== undefined && e.BACKUP_DIR === undefined) {
    throw new ConfigError(['BACKUP_EVERY: set BACKUP_DIR too, the directory scheduled backups are written to']);
  }
  // Node's timers hold at most 2^31-1 ms (about 24.8 days).
  if (e.BACKUP_EVERY !== undefined && e.BACKUP_EVERY > 2 ** 31 - 1) throw new ConfigError(['BACKUP_EVERY: at most 24d']);
  const publicUrl = (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    corsOrigins: e.CORS_ORIGINS ?? [],
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    embeddedDatabaseThread: e.EMBEDDED_DATABASE_THREAD ?? false,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    presenceTtlSeconds: e.PRESENCE_TTL_SECONDS,
    metricsToken: e.METRICS_TOKEN,
    s3: e.S3_BUCKET
      ? {
          endpoint: e.S3_ENDPOINT,
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE ?? Boolean(e.S3_ENDPOINT),
        }
      : undefined,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    signupMode: e.SIGNUP_MODE,
    oidc:
      e.OIDC_ISSUER && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET
        ? {
            issuer: e.OIDC_ISSUER,
            clientId: e.OIDC_CLIENT_ID,
            clientSecret: e.OIDC_CLIENT_SECRET,
            allowedDomains: e.OIDC_ALLOWED_DOMAINS ?? [],
            name: e.OIDC_NAME ?? new URL(e.OIDC_ISSUER).hostname,
          }
        : undefined,
    cookieSecure: e.COOKIE_SECURE ?? publicUrl.startsWith('https:'),
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    apiWritesPerMinute: e.API_WRITES_PER_MINUTE,
    formSubmissionsPerMinute: e.FORM_SUBMISSIONS_PER_MINUTE,
    logLevel: e.LOG_LEVEL,
    startTrace: e.TRELLIS_START_TRACE ?? false,
    compactAfterUpdates: e.COMPACT_AFTER_UPDATES,
    documentLoadBudgetBytes: e.DOCUMENT_LOAD_BUDGET_MB * 1024 * 1024,
    syncCeilings: {
      connectionsPerDocument: e.SYNC_MAX_CONNECTIONS_PER_DOCUMENT,
      documentBytes: e.SYNC_MAX_DOCUMENT_BYTES,
      updateBytes: e.SYNC_MAX_UPDATE_BYTES,
      loadedDocuments: e.SYNC_MAX_LOADED_DOCUMENTS,
    },
    failpoints: e.TRELLIS_FAILPOINTS,
    adminToken: e.ADMIN_TOKEN,
    backup: e.BACKUP_DIR ? { dir: path.resolve(e.BACKUP_DIR), everyMs: e.BACKUP_EVERY ?? 24 * 3_600_000, keep: e.BACKUP_KEEP } : undefined,
  };
}

/**
 * `https://app.example.com` (or with a port) as the browser sends it in
 * `Origin`; null for anything else. A wildcard is refused on purpose: it
 * would hand every site the signed-in person's cookie.
 */
function originOf(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.search || url.hash || url.host.includes('*')) return null;
  if (url.pathname !== '/' || !/^[a-z]+:\/\/[^/]+\/?$/i.test(entry)) return null;
  return url.origin;
}
