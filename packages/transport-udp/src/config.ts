import {
  DEFAULT_RATE_LIMITS,
  DEFAULT_TIMEOUTS,
  type RateLimits,
  type Timeouts,
  TransportError,
  validateRateLimits,
} from '@netplay/transport';
import { DATA_HEADER_BYTES, FRAGMENT_HEADER_BYTES, UNRELIABLE_HEADER_BYTES } from './wire.js';

/** Tunables of a UDP connection (both ends should use the same values). */
export interface UdpConfig {
  /** Largest datagram sent, in bytes of UDP payload (default 1200). */
  readonly mtu: number;
  /** Largest reliable message (default 4 MiB: our cores' savestates are KB to a few MB). */
  readonly maxMessageBytes: number;
  /**
   * Most bytes a connection may hold in messages being reassembled or waiting for an earlier one
   * (default 8 MiB, at least 2 × maxMessageBytes), counted as the fragments actually received plus
   * a fixed overhead per message and per fragment (the announced size reserves nothing). A peer
   * exceeding it is disconnected with `TransportError('limit')`.
   */
  readonly maxReassemblyBytes: number;
  /**
   * Each connection's budget for what its peer sends (one unit per valid datagram and one per
   * message delivered; the datagrams' bytes), default `DEFAULT_RATE_LIMITS` of @netplay/transport.
   * A peer over it is closed with `flood`. `false` disables it (throughput benchmarks).
   */
  readonly rateLimits: RateLimits | false;
  /** Most reliable messages queued or unacknowledged; `send` throws `limit` beyond (default 65 536). */
  readonly maxSendQueue: number;
  /**
   * Liveness timeouts in ms: `interrupted` after `interruptMs` of silence (default 750), closed with
   * `timeout` after `disconnectMs` (default 5000, must exceed `interruptMs`), and a client's
   * handshake abandoned after `connectMs` (default 5000).
   */
  readonly timeouts: Timeouts;
  /** Send a PING when nothing was sent for this long, ms (default min(250, interruptMs / 3)). */
  readonly keepaliveMs: number;
  /** Period of the retransmission / liveness timer, ms (default 5). */
  readonly tickMs: number;
  /** Initial congestion window in bytes of reliable payload in flight (default 64 KiB). */
  readonly initialWindowBytes: number;
  /** Lower bound of the congestion window in bytes: losses never shrink it below this (default 8 KiB, at most `initialWindowBytes`). */
  readonly minWindowBytes: number;
  /** Upper bound of the congestion window in bytes: growth stops here (default 4 MiB, at least `initialWindowBytes`). */
  readonly maxWindowBytes: number;
  /**
   * A reliable channel with less than this many bytes in flight may always send, even when the
   * congestion window is full, so a bulk transfer cannot starve inputs (default 2 datagrams).
   */
  readonly expressBytes: number;
  /** Minimum retransmission timeout, ms (default 20). */
  readonly minRtoMs: number;
}

/** Options accepted where a {@link UdpConfig} is built: every field optional. */
export type UdpConfigOptions = Partial<Omit<UdpConfig, 'timeouts'>> & {
  /** Liveness timeouts in ms; each one left out takes `DEFAULT_TIMEOUTS` of @netplay/transport (750 / 5000 / 5000). */
  readonly timeouts?: Partial<Timeouts>;
};

/** Builds and checks a configuration; throws `TransportError('invalid-argument')`. */
export function resolveConfig(options: UdpConfigOptions = {}): UdpConfig {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const mtu = options.mtu ?? 1200;
  const maxMessageBytes = options.maxMessageBytes ?? 4 << 20;
  const c: UdpConfig = {
    mtu,
    maxMessageBytes,
    maxReassemblyBytes: options.maxReassemblyBytes ?? Math.max(8 << 20, 2 * maxMessageBytes),
    maxSendQueue: options.maxSendQueue ?? 65_536,
    timeouts,
    keepaliveMs: options.keepaliveMs ?? Math.max(1, Math.min(250, timeouts.interruptMs / 3)),
    tickMs: options.tickMs ?? 5,
    initialWindowBytes: options.initialWindowBytes ?? 64 << 10,
    minWindowBytes: options.minWindowBytes ?? 8 << 10,
    maxWindowBytes: options.maxWindowBytes ?? 4 << 20,
    expressBytes: options.expressBytes ?? 2 * mtu,
    minRtoMs: options.minRtoMs ?? 20,
    rateLimits: options.rateLimits ?? DEFAULT_RATE_LIMITS,
  };
  const bad = (why: string) => new TransportError('invalid-argument', why);
  if (!Number.isInteger(mtu) || mtu < 256 || mtu > 65_507) throw bad('mtu must be an integer in [256, 65507]');
  if (!(c.maxMessageBytes >= 1) || c.maxMessageBytes > 0xffff_ffff) throw bad('maxMessageBytes out of range');
  if (!(c.maxReassemblyBytes >= 2 * c.maxMessageBytes)) throw bad('maxReassemblyBytes must be >= 2 × maxMessageBytes');
  if (c.rateLimits !== false) {
    try {
      validateRateLimits(c.rateLimits);
    } catch (e) {
      throw bad(`rateLimits: ${(e as Error).message}`);
    }
  }
  if (!(c.tickMs > 0) || !(c.keepaliveMs > 0)) throw bad('tickMs and keepaliveMs must be positive');
  if (!(timeouts.interruptMs > 0 && timeouts.disconnectMs > timeouts.interruptMs && timeouts.connectMs > 0)) {
    throw bad('timeouts: need 0 < interruptMs < disconnectMs and connectMs > 0');
  }
  if (!(c.minWindowBytes > 0 && c.minWindowBytes <= c.initialWindowBytes && c.initialWindowBytes <= c.maxWindowBytes)) {
    throw bad('need 0 < minWindowBytes <= initialWindowBytes <= maxWindowBytes');
  }
  return Object.freeze(c);
}

/** Payload bytes of one fragment. */
export function fragmentSize(c: UdpConfig): number {
  return c.mtu - DATA_HEADER_BYTES - FRAGMENT_HEADER_BYTES;
}

/** Largest unreliable message (one frame in one datagram). */
export function maxUnreliable(c: UdpConfig): number {
  return c.mtu - DATA_HEADER_BYTES - UNRELIABLE_HEADER_BYTES;
}
