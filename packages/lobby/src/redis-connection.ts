import { createClient, type RedisClientType } from '@redis/client';
import { LobbyError } from './errors.js';

/** A command connection and a subscriber connection to one Redis. */
export interface RedisPair {
  readonly cmd: RedisClientType;
  readonly sub: RedisClientType;
}

/**
 * Connects two clients (commands, and pub/sub) to `url` (`redis://host:port`). They reconnect on
 * their own after a Redis restart (every 100–1000 ms) and resubscribe; commands issued while
 * disconnected fail at once (no offline queue), so an HTTP request gets `unavailable` instead of
 * hanging. Rejects with {@link LobbyError} `unavailable` when Redis cannot be reached at first.
 */
export async function connectRedisPair(url: string): Promise<RedisPair> {
  let connected = false;
  const make = () =>
    createClient({
      url,
      disableOfflineQueue: true,
      socket: {
        // Before the first connection: give up after 3 tries (a wrong URL fails fast); after it: retry for ever.
        reconnectStrategy: (retries: number, cause: Error) =>
          !connected && retries >= 2
            ? new LobbyError('unavailable', `cannot reach Redis at ${url}: ${cause.message}`)
            : Math.min(100 * (retries + 1), 1000),
        connectTimeout: 5000,
      },
    }) as unknown as RedisClientType;
  const cmd = make();
  const sub = make();
  cmd.on('error', () => {});
  sub.on('error', () => {});
  try {
    await Promise.all([cmd.connect(), sub.connect()]);
  } catch (e) {
    for (const c of [cmd, sub]) {
      try {
        c.destroy();
      } catch {
        // not open
      }
    }
    const message = e instanceof Error ? e.message : String(e);
    throw new LobbyError(
      'unavailable',
      message.startsWith('cannot reach Redis') ? message : `cannot reach Redis at ${url}: ${message}`,
    );
  }
  connected = true;
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
