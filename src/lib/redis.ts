import type { Redis, RedisOptions } from 'ioredis';
import { whenNeeded } from './when-needed';

/** A client of the Redis at `url`; ioredis is loaded by the first one (a server without REDIS_URL never loads it). */
export function newRedis(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = whenNeeded<typeof import('ioredis')>('ioredis');
  return new Client(url, options);
}

/**
 * The two Redis connections a pub/sub user needs (a subscriber cannot
 * publish). No offline queue and a command timeout: while Redis is away a
 * publish fails at once (its user catches up when Redis is back) instead of
 * piling up in memory or hanging a caller. Subscriptions are renewed by the
 * user on `ready`, not by ioredis, so it knows when to catch up.
 */
export function openPubSub(url: string): { pub: Redis; sub: Redis } {
  return { pub: openRedis(url), sub: openRedis(url, { autoResubscribe: false }) };
}

/** One connection with the rules above: no offline queue, a command timeout, errors read from `status`. */
export function openRedis(url: string, extra: { autoResubscribe?: boolean } = {}): Redis {
  const client = newRedis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000, ...extra });
  // The state is read from `status`; ioredis reconnects by itself.
  client.on('error', () => {});
  return client;
}

/** Quits politely when connected, else drops the connection (a quit would wait for a Redis that is away). */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

export function bothReady(pair: { pub: Redis; sub: Redis }): boolean {
  return pair.pub.status === 'ready' && pair.sub.status === 'ready';
}

/**
 * Calls `listener` each time the pair is usable again: whenever either
 * connection becomes ready while the other already is. The two reconnect on
 * their own schedules, so waiting for one alone would publish into a
 * connection that is still down (and that publish would be lost).
 */
export function onBothReady(pair: { pub: Redis; sub: Redis }, listener: () => void) {
  for (const client of [pair.pub, pair.sub]) {
    client.on('ready', () => {
      if (bothReady(pair)) listener();
    });
  }
}

export async function closePubSub(pair: { pub: Redis; sub: Redis }): Promise<void> {
  for (const client of [pair.sub, pair.pub]) await closeRedis(client);
}
