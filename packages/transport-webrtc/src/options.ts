import type { ChannelSpec, Clock, RateLimits, Timeouts } from '@netplay/transport';
import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_TIMEOUTS,
  systemClock,
  TransportError,
  validateRateLimits,
} from '@netplay/transport';
import type { RtcSetup } from './rtc.js';

/** Options of one end of a netplay-webrtc connection. */
export interface WebRtcConnectionOptions {
  /** The channels; both ends must declare the same list in the same order. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts (default 750 ms, 5 s, 5 s). `connectMs` covers ICE, DTLS, SCTP and the HELLO. */
  readonly timeouts?: Partial<Timeouts>;
  /** `RTCPeerConnection` and its configuration (ICE servers). Default: the global one, no ICE servers. */
  readonly rtc?: RtcSetup;
  /** Largest reliable message (default 16 MiB); both ends use the smaller of their values. */
  readonly maxMessageBytes?: number;
  /**
   * Largest unreliable message (default 16 KiB); both ends use the smaller of their values, and at
   * most the SCTP maximum message size less the 4-byte header.
   */
  readonly maxUnreliableBytes?: number;
  /** A reliable `send` that would take a data channel's `bufferedAmount` past this throws `limit` (default 16 MiB). */
  readonly maxBufferedBytes?: number;
  /** Above this `bufferedAmount`, unreliable messages are held back, newest only (default 256 KiB). */
  readonly highWaterBytes?: number;
  /** PING period on the ping channel (default `min(250, interruptMs / 3)`). */
  readonly pingIntervalMs?: number;
  /** How often `bufferedAmount` is polled while anything is queued (default 5 ms). */
  readonly pollMs?: number;
  /**
   * After a close, how long to wait for the reliable messages announced in the peer's CLOSE, and how
   * long a closing side keeps its peer connection for the CLOSE to get through (default 2000 ms).
   */
  readonly closeGraceMs?: number;
  /**
   * The peer's budget of received data-channel messages and bytes per second (default
   * `DEFAULT_RATE_LIMITS`); over it the peer is closed with `flood`. `false` disables it.
   */
  readonly rateLimits?: RateLimits | false;
  /** Time source for timers and RTT (default the system clock). */
  readonly clock?: Clock;
}

/** {@link WebRtcConnectionOptions} with every default filled in. */
export interface ResolvedOptions {
  /** The channel list passed to {@link resolveOptions} (at most 250), in declaration order: channel i rides data channel id `2 + i`. */
  readonly channels: readonly ChannelSpec[];
  /** Liveness timeouts in ms, each given one or `DEFAULT_TIMEOUTS`' (interrupt 750, disconnect 5000, connect 5000, the last covering ICE, DTLS, SCTP and the HELLO); all positive. */
  readonly timeouts: Timeouts;
  /** This end's largest reliable message in bytes, an integer (default {@link DEFAULT_MAX_MESSAGE_BYTES}, at most `MAX_LIMIT`, 2^32 − 1); sent in HELLO/WELCOME, the smaller of both ends' applies. */
  readonly maxMessageBytes: number;
  /** This end's largest unreliable message in bytes, an integer (default {@link DEFAULT_MAX_UNRELIABLE_BYTES}, at most `MAX_LIMIT`, 2^32 − 1); the agreed limit is also capped by the SCTP chunk size less the 4-byte header. */
  readonly maxUnreliableBytes: number;
  /** A data channel's `bufferedAmount` in bytes past which a reliable `send` throws `TransportError('limit')` (default 16 MiB). */
  readonly maxBufferedBytes: number;
  /** `bufferedAmount` in bytes above which unreliable messages are held back, newest per channel kept (default 256 KiB). */
  readonly highWaterBytes: number;
  /** Ms between PINGs on the ping channel, which measure RTT and loss and feed the peer's liveness (default `max(1, min(250, interruptMs / 3))`). */
  readonly pingIntervalMs: number;
  /** Ms between polls of `bufferedAmount` while anything is queued (default 5). */
  readonly pollMs: number;
  /** Ms to wait after a close for the reliable messages the peer's CLOSE announced, and that a closing side keeps its peer connection for its CLOSE to get through (default 2000). */
  readonly closeGraceMs: number;
  /** The budget applied to the data-channel messages and bytes the peer sends (default `DEFAULT_RATE_LIMITS`), or `false` when disabled; over it the peer is closed with `flood`. */
  readonly rateLimits: RateLimits | false;
  /** Time source for timers, pings and RTT (default the system clock; tests pass a `ManualClock`). */
  readonly clock: Clock;
}

/** Default largest reliable message: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 << 20;
/** Default largest unreliable message: 16 KiB (fits every browser's SCTP message size). */
export const DEFAULT_MAX_UNRELIABLE_BYTES = 16 << 10;
/** Largest value of either message limit (they travel as u32). */
export const MAX_LIMIT = 0xffff_ffff;

function positive(value: number | undefined, fallback: number, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || value > max) {
    throw new TransportError('invalid-argument', `${what} must be a number in (0, ${max}]`);
  }
  return value;
}

/** Fills in defaults and checks ranges. Throws `TransportError('invalid-argument')`. */
export function resolveOptions(options: WebRtcConnectionOptions, channels: readonly ChannelSpec[]): ResolvedOptions {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  positive(timeouts.interruptMs, 1, 'timeouts.interruptMs');
  positive(timeouts.disconnectMs, 1, 'timeouts.disconnectMs');
  positive(timeouts.connectMs, 1, 'timeouts.connectMs');
  if (channels.length > 250) throw new TransportError('invalid-argument', 'at most 250 channels');
  let rateLimits: RateLimits | false = DEFAULT_RATE_LIMITS;
  if (options.rateLimits === false) rateLimits = false;
  else if (options.rateLimits !== undefined) {
    try {
      rateLimits = validateRateLimits(options.rateLimits);
    } catch (e) {
      throw new TransportError('invalid-argument', (e as Error).message, { cause: e });
    }
  }
  return {
    channels,
    timeouts,
    maxMessageBytes: Math.floor(
      positive(options.maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES, 'maxMessageBytes', MAX_LIMIT),
    ),
    maxUnreliableBytes: Math.floor(
      positive(options.maxUnreliableBytes, DEFAULT_MAX_UNRELIABLE_BYTES, 'maxUnreliableBytes', MAX_LIMIT),
    ),
    maxBufferedBytes: positive(options.maxBufferedBytes, 16 << 20, 'maxBufferedBytes'),
    highWaterBytes: positive(options.highWaterBytes, 256 << 10, 'highWaterBytes'),
    pingIntervalMs: positive(
      options.pingIntervalMs,
      Math.max(1, Math.min(250, timeouts.interruptMs / 3)),
      'pingIntervalMs',
    ),
    pollMs: positive(options.pollMs, 5, 'pollMs'),
    closeGraceMs: positive(options.closeGraceMs, 2000, 'closeGraceMs'),
    rateLimits,
    clock: options.clock ?? systemClock,
  };
}
