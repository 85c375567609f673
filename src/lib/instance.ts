import { randomBytes } from 'node:crypto';
import os from 'node:os';

/**
 * This process, as other instances sharing the database and Redis see it:
 * written into document log heads, stamped on relayed sync and bus messages
 * (so an instance ignores its own), and a label on metrics.
 */
export const INSTANCE_ID = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
