import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Actor } from '../policy/actor';
import type { RateLimitRule } from '../limits/rules';

/** The Fastify instance every route module receives, typed by zod schemas. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `required` (default): 401 without a caller. `optional`: anonymous allowed. `none`: credentials ignored. */
    auth?: 'required' | 'optional' | 'none';
    /** Burst limits checked before the handler, after validation (keys may read the body). */
    rateLimits?: RateLimitRule[];
    /** False for the documented exemptions from the monthly API-call counter. */
    metered?: boolean;
    /**
     * True for writes the monthly API-call cap never refuses: billing (the way out of the cap), sign-in and
     * the settings the web app needs (docs/LIMITS.md). They are still counted. Reads are never refused.
     */
    capExempt?: boolean;
    /** False where the route limits writes itself (MCP: only tool calls that write take a slot). */
    writeLimited?: boolean;
    /** False: no CORS headers and no `Vary: Origin` (the web app's files; src/http/cors.ts). */
    cors?: false;
  }
  interface FastifyInstance {
    /** Every route the app serves (HEAD omitted), in registration order. */
    registeredRoutes: Array<{ method: string; url: string }>;
    /** Removes automatic versions past each plan's window (an hourly timer; tests call `runOnce`). */
    versionRetention: import('../domain/version-retention').VersionRetention;
    /** The trash pass of files surfaces (`runOnce()` for tests and operators). */
    fileTrash: import('../domain/file-trash').FileTrashJob;
    /** ANALYZE of the embedded database's changed tables (PGlite runs no autovacuum; `runOnce` for tests). */
    plannerStatistics: import('../domain/planner-statistics').PlannerStatisticsJob;
    embeddedCheckpoints: import('../domain/embedded-checkpoint').EmbeddedCheckpointJob;
    /** Backups taken by this server: the admin route's and, with BACKUP_DIR, scheduled ones (`runScheduled` for tests). */
    backups: import('../domain/backup-job').Backups;
  }
  interface FastifyRequest {
    actor: Actor | null;
  }
}
