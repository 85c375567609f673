import type { Migration } from 'kysely';
import * as m0001 from './0001_platform';

/**
 * Every migration, in order. Listed statically (not read from the disk) so the
 * same set runs under tsx, vitest and on PGlite and Postgres alike.
 */
export const migrations: Record<string, Migration> = {
  '0001_platform': m0001,
};
