import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { parse as parseQueryString } from 'node:querystring';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { registerRoutes } from './api/index';
import { SESSION_TTL_MS } from './domain/accounts';
import { FileTrashJob } from './domain/file-trash';
import { PlannerStatisticsJob } from './domain/planner-statistics';
import { EmbeddedCheckpointJob } from './domain/embedded-checkpoint';
import { Backups } from './domain/backup-job';
import { VersionRetention } from './domain/version-retention';
import { startWebhookDelivery } from './domain/webhooks';
import { errors } from './errors';
import { resolveActor } from './http/authenticate';
import { registerCors } from './http/cors';
import { closeAfterEarlyAnswers } from './http/early-answer';
import { handleError, handleNotFound } from './http/error-handler';
import { registerLimitHooks } from './http/limits';
import { registerMetrics } from './http/metrics';
import { registerOpenApi } from './http/openapi';
import { requestIdFor } from './http/request-id';
import type { App } from './http/types';
import { dropOrgSlugOnBarePaths } from './operations/workspace-routes';
import { declarePlatformErrors } from './http/declared-errors';
import { directUploadOrigins, registerWebApp } from './http/web-app';
import { enterRequest } from './lib/request-context';
import { actorOfRequest, answerRunScope } from './http/run-header';
import { MAX_JSON_DEPTH, storableJson, TooDeepError } from './lib/text';
import { ToolRegistry } from './mcp/registry';
import type { Services } from './domain/services';

export const JSON_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * The app factory shared by `main` and the tests: platform plugins first
 * (ids, errors, CORS, cookies, OpenAPI, caller resolution), then every
 * resource's routes. It does not listen; the caller decides.
 */
export async function buildApp(services: Services): Promise<App> {
  const app = Fastify({
    loggerInstance: services.log,
    // With logging off, a request logs through the app's logger: the children a request would make (its id, its caller) would write nothing.
    childLoggerFactory: (logger, bindings, options) => (logger.level === 'silent' ? logger : logger.child(bindings, options)),
    genReqId: requestIdFor,
    bodyLimit: JSON_BODY_LIMIT,
    trustProxy: false,
    // Every path parameter Node's 16 KB request head can carry reaches its route, whose schema refuses an
    // over-long one with a declared 422, instead of the router's undeclared 414 (or, past the limit, the web
    // app's page standing in for a route that did not match). No route uses a regex parameter.
    routerOptions: { ignoreTrailingSlash: true, querystringParser: parseStorableQueryString, maxParamLength: 16 * 1024 },
    // A URL that is not valid UTF-8 is refused before any route runs: in the documented error shape, as a 400 every route declares.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      return handleError(error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? errors.notFound('Resource') : errors.badRequest('The URL is not valid: it must be UTF-8 and percent-encoded.'), request, reply);
    },
  }).withTypeProvider<import('fastify-type-provider-zod').ZodTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  acceptEmptyJsonBodies(app);
  closeAfterEarlyAnswers(app);

  app.decorateRequest('actor', null);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Only the embedded database's driver reads the request id from a context (src/lib/request-context.ts); on Postgres no store is entered, so promise hooks stay off.
  // On PGlite the store (and the promise hooks) is on only while a request is open: a typist's keystrokes alone pay none.
  if (services.database.kind === 'pglite') app.addHook('onRequest', (request, reply, done) => enterRequest(request.id, reply.raw, done));
  // The run the request's writes join (docs/RUNS.md): named by `Trellis-Run`, carried by the request's actor, decided by access, answered in `Trellis-Run`.
  app.addHook('onSend', (request, reply, payload, done) => {
    answerRunScope(request, reply);
    done(null, payload);
  });

  await registerCors(app, services.config);
  await app.register(cookie);
  await registerOpenApi(app, services);

  app.addHook('onRequest', async (request, reply) => {
    // Unknown routes skip authentication so they answer 404, not 401.
    const mode = request.routeOptions.url === undefined ? 'none' : (request.routeOptions.config?.auth ?? 'required');
    if (mode === 'none') return;
    const { actor, invalid } = await resolveActor(services, request);
    const presentedBearer = Boolean(request.headers.authorization);
    if (invalid && (presentedBearer || mode === 'required')) throw errors.unauthorized('Invalid or revoked credentials.');
    if (!actor && mode === 'required') throw errors.unauthorized();
    request.actor = actor && actorOfRequest(request, actor);
    // Every later log line of the request (and its "request completed") names the caller, never the credential.
    if (actor && request.log.level !== 'silent') request.log = reply.log = request.log.child({ principalId: actor.principal.id });
  });
  registerLimitHooks(app, services);

  // Before metrics and routes: /metrics, /api/health and the admin route read its status.
  const backups = new Backups(services);
  app.decorate('backups', backups);
  app.addHook('onReady', async () => backups.start());
  app.addHook('preClose', async () => backups.stop());
  registerMetrics(app, services);

  dropOrgSlugOnBarePaths(app);
  declarePlatformErrors(app);
  // Kept for the OpenAPI completeness check and for operators listing what is served.
  const registeredRoutes: Array<{ method: string; url: string }> = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') registeredRoutes.push({ method, url: route.url });
  });
  app.decorate('registeredRoutes', registeredRoutes);
  app.decorate('mcpTools', new ToolRegistry());
  await app.register(async (scope) => registerRoutes(scope as App, services));
  // Last: its wildcard route answers only what no API route claims.
  await registerWebApp(app, {
    config: services.config,
    uploadOrigins: directUploadOrigins(services.config.s3),
    session: {
      isLive: async (request) => (await resolveActor(services, request)).actor?.via === 'session',
      maxAgeSeconds: Math.floor(SESSION_TTL_MS / 1000),
    },
  });

  // Archived files past their 30 days, expired upload reservations: swept on a timer while the app runs.
  const fileTrash = new FileTrashJob(services);
  app.decorate('fileTrash', fileTrash);
  app.addHook('onReady', async () => fileTrash.start());
  app.addHook('preClose', async () => fileTrash.stop());

  // Webhook deliveries are sent while the app runs (src/webhooks).
  app.addHook('onReady', async () => startWebhookDelivery(services));
  app.addHook('preClose', async () => services.webhooks.stop());

  // Sync shares the port: websocket upgrades on /api/sync go to Hocuspocus.
  services.sync.attach(app.server);
  app.addHook('preClose', async () => services.sync.close());

  // Automatic versions past the plan's window (docs/VERSIONS.md): swept on a timer while the app runs.
  const plannerStatistics = new PlannerStatisticsJob(services);
  app.decorate('plannerStatistics', plannerStatistics);
  app.addHook('onReady', async () => plannerStatistics.start());
  app.addHook('preClose', async () => plannerStatistics.stop());
  const embeddedCheckpoints = new EmbeddedCheckpointJob(services);
  app.decorate('embeddedCheckpoints', embeddedCheckpoints);
  app.addHook('onReady', async () => embeddedCheckpoints.start());
  app.addHook('preClose', async () => embeddedCheckpoints.stop());

  const versionRetention = new VersionRetention(services);
  app.decorate('versionRetention', versionRetention);
  app.addHook('onReady', async () => versionRetention.start());
  app.addHook('preClose', async () => versionRetention.stop());
  return app;
}

/** Clients often send `Content-Type: application/json` with no body on POST/DELETE; that means "no body", not an error. */
function acceptEmptyJsonBodies(app: FastifyInstance<any, any, any, any, any>) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return done(errors.invalidJson(error instanceof SyntaxError ? error.message : undefined), undefined);
    }
    try {
      done(null, storableJson(parsed, MAX_JSON_DEPTH));
    } catch (error) {
      if (!(error instanceof TooDeepError)) throw error;
      done(errors.badRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, [{ path: [], code: 'too_deep', message: error.message }]), undefined);
    }
  });
}

/**
 * Every string that enters over HTTP is storable text (src/lib/text.ts):
 * JSON bodies above, query strings here. Lone surrogates and U+0000 become
 * U+FFFD before any route sees them, so no write fails for its characters.
 */
function parseStorableQueryString(query: string): Record<string, unknown> {
  // Most requests carry none (the router's own parser answers them the same way).
  if (query.length === 0) return {};
  return nestBracketKeys(storableJson({ ...parseQueryString(query) }));
}

const BRACKET_KEY = /^([^[\]]+)\[([^[\]]*)\](?:\[([^[\]]*)\])?$/;

/**
 * `filter[status][in]=a,b` becomes `{ filter: { status: { in: 'a,b' } } }`
 * (docs/TABLES.md), two levels at most; other keys stay as they are. Nested
 * objects are built with `defineProperty`, so no key ever sets a prototype.
 */
function nestBracketKeys(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const own = (target: Record<string, unknown>, key: string, value: unknown) =>
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  for (const [key, value] of Object.entries(parsed)) {
    const match = BRACKET_KEY.exec(key);
    // A schema's record drops a `__proto__` key without a word: left as written, the route refuses it as an unknown parameter.
    if (!match || match.slice(1).includes('__proto__')) {
      if (!Object.hasOwn(out, key)) own(out, key, value);
      continue;
    }
    const [, name, first, second] = match as unknown as [string, string, string, string | undefined];
    const existing = Object.hasOwn(out, name) ? out[name] : undefined;
    // `filter=x&filter[a][b]=y`: the plain value stays, and the route's schema says what is wrong with it.
    if (existing !== undefined && (typeof existing !== 'object' || existing === null || Array.isArray(existing))) continue;
    const level1 = (existing as Record<string, unknown> | undefined) ?? (own(out, name, {}), out[name] as Record<string, unknown>);
    if (second === undefined) {
      own(level1, first, value);
      continue;
    }
    const inner = Object.hasOwn(level1, first) ? level1[first] : undefined;
    const level2 = inner && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : (own(level1, first, {}), level1[first] as Record<string, unknown>);
    own(level2, second, value);
  }
  return out;
}
