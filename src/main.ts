import { raiseTieringBudgetForStart, restoreTieringBudget } from './lib/start-tiering';

/**
 * A compiled start (dist/server/main.js, scripts/build.ts) copies the
 * database template its build made into a fresh DATA_DIR; `tsx src/main.ts`
 * (development, tests) creates the database itself, as before.
 */
const compiled = import.meta.url.endsWith('/dist/server/main.js');

/** Wires configuration, database, mail and the app, then listens. Nothing else. */
async function main() {
  // Before any other module of the server is evaluated (they are imported here, not at the top, for that): ./lib/start-tiering.ts.
  raiseTieringBudgetForStart();
  const [{ startMark, startMarkLines }, { ConfigError, loadConfig }, { BUILT_TEMPLATE, seedDataDir }] = await Promise.all([
    import('./lib/start-marks'),
    import('./config'),
    import('./persistence/pglite-template'),
  ]);
  startMark('entry module evaluated');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    throw error;
  }
  // The template's copy starts before the server's modules load (imported here, not at the top, for that):
  // its disk work runs in the thread pool while they compile on this thread. The database opens after both.
  const seeding = compiled && !config.databaseUrl ? seedDataDir(config.dataDir, BUILT_TEMPLATE) : undefined;
  // A failed copy is reported below, where opening the database would have reported it, not as an unhandled rejection meanwhile.
  seeding?.catch(() => {});
  startMark('config read, copy started');
  const [{ createServices }, { buildApp }] = await Promise.all([import('./bootstrap'), import('./app')]);
  startMark('server modules loaded');
  if (seeding) {
    await seeding;
    startMark('template copied');
  }
  const { services, close } = await createServices(config, { pgliteTemplate: compiled ? BUILT_TEMPLATE : undefined });
  startMark('services created');
  const { log, database } = services;
  const app = await buildApp(services);
  startMark('app built');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000).unref();
    try {
      await app.close();
      await close();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  startMark('listening');
  restoreTieringBudget();
  if (config.startTrace) process.stderr.write(startMarkLines());
  log.info({ url: config.publicUrl, database: database.kind, dataDir: config.dataDir }, 'Trellis is listening');
}

main().catch((error) => {
  console.error('Trellis failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
