import type { ChannelSpec, Clock, RateLimits, Timeouts } from '@netplay/transport';
import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_TIMEOUTS,
  systemClock,
  TransportError,
  validateRateLimits,
} from '@netplay/transport';
import { encodeHello, MAX_LIMIT, UNRELIABLE_HEADER_BYTES } from './frame.js';

/** Options of one end of a netplay-ws connection (client or server side). */
export interface WsConnectionOptions {
  /** The channels; both ends must declare the same list in the same order. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts (default `DEFAULT_TIMEOUTS`: 750 ms, 5 s, 5 s). */
  readonly timeouts?: Partial<Timeouts>;
  /**
   * Largest reliable message this end accepts and sends (default 8 MiB: our cores' savestates are
   * KB to a few MB). The two ends exchange their limits in the handshake and both use the smaller
   * one. A listener's worst-case receive memory grows with it (see the README).
   */
  readonly maxMessageBytes?: number;
  /** Largest unreliable message (default 64 KiB); negotiated like `maxMessageBytes`. */
  readonly maxUnreliableBytes?: number;
  /**
   * When the socket's `bufferedAmount` is above this many bytes, unreliable messages are held back
   * and only the newest one per channel is kept until the socket drains (default 64 KiB).
   */
  readonly highWaterBytes?: number;
  /** `send` on a reliable channel throws `TransportError('limit')` when the socket buffer would pass this (default 64 MiB). */
  readonly maxBufferedBytes?: number;
  /** Interval of application-level PING frames (default `min(1000, interruptMs / 3)`). */
  readonly pingIntervalMs?: number;
  /** How often `bufferedAmount` is polled while anything is queued (default 5 ms). */
  readonly pollMs?: number;
  /** After a local close, the socket is terminated if the closing handshake has not finished within this many ms (default 1000). */
  readonly closeGraceMs?: number;
  /** Time source (default the system clock). Tests pass a `ManualClock`. */
  readonly clock?: Clock;
  /**
   * The peer's budget of received WebSocket messages and bytes per second (default
   * `DEFAULT_RATE_LIMITS`: 4,000 messages and 4 MiB a second, 2 s burst, with the byte rate raised
   * to `maxMessageBytes` when that is larger: 8 MiB/s by default). A peer over it is closed
   * with close code 4004 and a `flood: …` reason (locally: code `error`, `TransportError('flood')`).
   * `false` disables it (throughput benches).
   */
  readonly rateLimits?: RateLimits | false;
}

/** {@link WsConnectionOptions} with every default filled in. */
export interface ResolvedOptions {
  /** The channel list passed to {@link resolveOptions} (already validated by the caller), in the order sent in HELLO. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts in ms, each given one or `DEFAULT_TIMEOUTS`' (interrupt 750, disconnect 5000, connect 5000); all positive. */
  readonly timeouts: Timeouts;
  /** This end's largest reliable message in bytes, an integer (default {@link DEFAULT_MAX_MESSAGE_BYTES}, at most `MAX_LIMIT − 16`); sent in HELLO/WELCOME, the smaller of both ends' applies. */
  readonly maxMessageBytes: number;
  /** This end's largest unreliable message in bytes, an integer (default {@link DEFAULT_MAX_UNRELIABLE_BYTES}, at most `MAX_LIMIT − 16`); negotiated like `maxMessageBytes`. */
  readonly maxUnreliableBytes: number;
  /** Socket `bufferedAmount` in bytes above which unreliable messages are held back, newest per channel kept (default 64 KiB; 0 allowed). */
  readonly highWaterBytes: number;
  /** Socket buffer in bytes past which `send` on a reliable channel throws `TransportError('limit')` (default 64 MiB). */
  readonly maxBufferedBytes: number;
  /** Ms between PING frames, which measure the RTT and keep the peer's liveness timer fed (default `max(1, min(1000, interruptMs / 3))`). */
  readonly pingIntervalMs: number;
  /** Ms between polls of the socket's `bufferedAmount` while anything is queued behind it (default 5). */
  readonly pollMs: number;
  /** Ms a local close waits for the WebSocket closing handshake before terminating the socket (default 1000). */
  readonly closeGraceMs: number;
  /** Time source for timers, pings and liveness (default the system clock; tests pass a `ManualClock`). */
  readonly clock: Clock;
  /** The budget applied to what the peer sends (`DEFAULT_RATE_LIMITS` with `bytesPerSecond` raised to `maxMessageBytes` when not given), or `false` when disabled. */
  readonly rateLimits: RateLimits | false;
}

/** Default largest reliable message: 8 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 << 20;
/** Default largest unreliable message: 64 KiB. */
export const DEFAULT_MAX_UNRELIABLE_BYTES = 64 << 10;

function positive(
  value: number | undefined,
  fallback: number,
  what: string,
  max = Number.MAX_SAFE_INTEGER,
  min = 0,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > min || (min < 0 && value === 0)) || value > max) {
    throw new TransportError('invalid-argument', `${what} must be a number in ${min < 0 ? '[0' : '(0'}, ${max}]`);
  }
  return value;
}

/**
 * The budget: `DEFAULT_RATE_LIMITS` when none is given, with `bytesPerSecond` raised to at least
 * `maxMessageBytes`, so that the burst (2 s) holds two messages of the largest size: a savestate
 * followed by inputs never looks like a flood.
 */
function rateLimits(limits: RateLimits | false | undefined, maxMessageBytes: number): RateLimits | false {
  if (limits === undefined) {
    return DEFAULT_RATE_LIMITS.bytesPerSecond >= maxMessageBytes
      ? DEFAULT_RATE_LIMITS
      : Object.freeze({ ...DEFAULT_RATE_LIMITS, bytesPerSecond: maxMessageBytes });
  }
  if (limits === false) return false;
  try {
    return validateRateLimits(limits);
  } catch (e) {
    throw new TransportError('invalid-argument', (e as Error).message, { cause: e });
  }
}

/**
 * Fills in defaults and checks ranges (`channels` must already be validated). Throws
 * `TransportError('invalid-argument')`.
 */
export function resolveOptions(options: WsConnectionOptions, channels: readonly ChannelSpec[]): ResolvedOptions {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  positive(timeouts.interruptMs, 1, 'timeouts.interruptMs');
  positive(timeouts.disconnectMs, 1, 'timeouts.disconnectMs');
  positive(timeouts.connectMs, 1, 'timeouts.connectMs');
  // The HELLO must be encodable: fail here rather than inside a socket callback.
  encodeHello({ maxMessageBytes: 0, maxUnreliableBytes: 0, channels });
  const maxMessageBytes = Math.floor(
    positive(options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, 'maxMessageBytes', MAX_LIMIT - 16),
  );
  return {
    channels,
    timeouts,
    maxMessageBytes,
    maxUnreliableBytes: Math.floor(
      positive(options.maxUnreliableBytes, DEFAULT_MAX_UNRELIABLE_BYTES, 'maxUnreliableBytes', MAX_LIMIT - 16),
    ),
    highWaterBytes: positive(options.highWaterBytes, 64 << 10, 'highWaterBytes', Number.MAX_SAFE_INTEGER, -1),
    maxBufferedBytes: positive(options.maxBufferedBytes, 64 << 20, 'maxBufferedBytes'),
    pingIntervalMs: positive(
      options.pingIntervalMs,
      Math.max(1, Math.min(1000, timeouts.interruptMs / 3)),
      'pingIntervalMs',
    ),
    pollMs: positive(options.pollMs, 5, 'pollMs'),
    closeGraceMs: positive(options.closeGraceMs, 1000, 'closeGraceMs'),
    clock: options.clock ?? systemClock,
    rateLimits: rateLimits(options.rateLimits, maxMessageBytes),
  };
}

/**
 * The `ws` `maxPayload` for these options: the larger message limit plus the largest data header,
 * but at least 16 KiB so that a HELLO with many long channel names always fits (a data frame above
 * the agreed limit and below this is refused by the connection core with close code 4003).
 */
export function wsMaxPayload(options: ResolvedOptions): number {
  return Math.max(options.maxMessageBytes, options.maxUnreliableBytes, 16 << 10) + UNRELIABLE_HEADER_BYTES;
}
