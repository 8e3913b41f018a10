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
  readonly channels: readonly ChannelSpec[];
  readonly timeouts: Timeouts;
  readonly maxMessageBytes: number;
  readonly maxUnreliableBytes: number;
  readonly maxBufferedBytes: number;
  readonly highWaterBytes: number;
  readonly pingIntervalMs: number;
  readonly pollMs: number;
  readonly closeGraceMs: number;
  readonly rateLimits: RateLimits | false;
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
