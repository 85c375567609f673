import pino from 'pino';
import { buildApp } from './app';
import { ConfigError, loadConfig } from './config';
import { systemClock } from './lib/clock';
import { createMailer } from './mail/mailer';
import { openDatabase } from './persistence/database';
import type { Services } from './services';

/** Wires configuration, database, mail and the app, then listens. Nothing else. */
async function main() {
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
  const log = pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
  });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, log });
  const services: Services = { config, db: database.db, database, mailer, clock: systemClock, log };
  const app = await buildApp(services);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000).unref();
    try {
      await app.close();
      await mailer.close();
      await database.close();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  log.info({ url: config.publicUrl, database: database.kind, dataDir: config.dataDir }, 'Trellis is listening');
}

main().catch((error) => {
  console.error('Trellis failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
