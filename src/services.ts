import type { Logger } from 'pino';
import type { Config } from './config';
import type { Clock } from './lib/clock';
import type { Mailer } from './mail/mailer';
import type { DatabaseHandle, Db } from './persistence/database';

/**
 * Everything a route or domain function may reach, built once by `main` (or a
 * test) and handed to the app. No module reads globals or the environment.
 */
export type Services = {
  config: Config;
  db: Db;
  database: DatabaseHandle;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
};
