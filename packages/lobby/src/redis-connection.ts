import { createClient, type RedisClientType } from '@redis/client';

/** A command connection and a subscriber connection to one Redis. */
export interface RedisPair {
  readonly cmd: RedisClientType;
  readonly sub: RedisClientType;
}

/**
 * Connects two clients (commands, and pub/sub) to `url` (`redis://host:port`). They reconnect on
 * their own after a Redis restart (every 100–1000 ms) and resubscribe; commands issued while
 * disconnected fail at once (no offline queue), so an HTTP request gets `unavailable` instead of
 * hanging.
 */
export async function connectRedisPair(url: string): Promise<RedisPair> {
  const make = () =>
    createClient({
      url,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries: number) => Math.min(100 * (retries + 1), 1000), connectTimeout: 5000 },
    }) as unknown as RedisClientType;
  const cmd = make();
  const sub = make();
  cmd.on('error', () => {});
  sub.on('error', () => {});
  await Promise.all([cmd.connect(), sub.connect()]);
  return { cmd, sub };
}

/** Closes both clients; `abandon` drops the sockets without QUIT (as a crashed node would). */
export async function closeRedisPair(pair: RedisPair, abandon = false): Promise<void> {
  for (const c of [pair.sub, pair.cmd]) {
    try {
      if (abandon) c.destroy();
      else await c.close();
    } catch {
      // already closed
    }
  }
}
