import {
  AdmissionGate,
  type AdmissionLimits,
  AttemptLimiter,
  type AttemptLimits,
  DEFAULT_ADMISSION_LIMITS,
  DEFAULT_ATTEMPT_LIMITS,
} from '@netplay/transport';
import { RetroArchError } from './errors.js';

/** Limits of a RetroArch host listener against hostile clients (options of `listenRetroArchHost`). */
export interface RetroArchAdmissionOptions {
  /**
   * Connections that have not finished the handshake (before SYNC), counted apart from joined
   * clients: `maxPending` in total (default 64; a newer one evicts the oldest of the address
   * holding the most), `maxPendingPerAddress` (default 8; more are refused with `full`),
   * `pendingTimeoutMs` (default 5 000; then closed with `timeout`).
   */
  readonly admission?: Partial<AdmissionLimits>;
  /** Connections at most, joined or not (default {@link DEFAULT_MAX_RETROARCH_CONNECTIONS}); more are refused with `full`. */
  readonly maxConnections?: number;
  /** Password attempts per address (default {@link DEFAULT_ATTEMPT_LIMITS}), when the host has a password. */
  readonly attempts?: Partial<AttemptLimits>;
}

/** Default cap on a RetroArch host listener's connections: 31 clients (RetroArch's most) plus 64 pending, plus one. */
export const DEFAULT_MAX_RETROARCH_CONNECTIONS = 96;

/** What {@link RetroArchAdmission.arrive} decided. */
export type RetroArchArrival<C> =
  | {
      /** `true`: the connection is counted and pending its handshake. */
      readonly ok: true;
      /** A pending connection the gate dropped to make room, which the caller must close now; usually undefined. */
      readonly evicted: C | undefined;
    }
  | {
      /** `false`: refused; the caller sends the error's header and closes the connection. */
      readonly ok: false;
      /** Why: `full`, when `maxConnections` are live or this address holds `maxPendingPerAddress` connections in the handshake. */
      readonly error: RetroArchError;
    };

/**
 * The listener's admission rules, sans-I/O (time from the caller): a count of live connections,
 * an {@link AdmissionGate} of those still in the handshake, and one {@link AttemptLimiter} of
 * password failures shared by every connection.
 */
export class RetroArchAdmission<C> {
  /** Connections still in the handshake (caps per address and in total, pending timeout), from the `admission` option over {@link DEFAULT_ADMISSION_LIMITS}. */
  readonly gate: AdmissionGate<C>;
  /** Password failures per address, shared by every connection of the listener, from the `attempts` option over {@link DEFAULT_ATTEMPT_LIMITS}. */
  readonly attempts: AttemptLimiter;
  /** Most live connections, joined or not (default {@link DEFAULT_MAX_RETROARCH_CONNECTIONS}, an integer ≥ 1); one more is refused with `full`. */
  readonly maxConnections: number;
  private readonly live = new Set<C>();

  /** @throws RangeError for a limit out of range. */
  constructor(options: RetroArchAdmissionOptions = {}) {
    this.gate = new AdmissionGate<C>({ ...DEFAULT_ADMISSION_LIMITS, ...options.admission });
    this.attempts = new AttemptLimiter({ ...DEFAULT_ATTEMPT_LIMITS, ...options.attempts });
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_RETROARCH_CONNECTIONS;
    if (!Number.isInteger(this.maxConnections) || this.maxConnections < 1)
      throw new RangeError(`maxConnections must be an integer ≥ 1, got ${this.maxConnections}`);
  }

  /** Live connections (joined or in the handshake). */
  get connections(): number {
    return this.live.size;
  }

  /**
   * A connection arrived from `address` at `now`: refused (`full`) when the listener holds
   * `maxConnections` or the address holds `maxPendingPerAddress` connections in the handshake;
   * otherwise pending until {@link joined}. `evicted` is an older pending connection to close now.
   */
  arrive(conn: C, address: string, now: number): RetroArchArrival<C> {
    if (this.live.size >= this.maxConnections)
      return { ok: false, error: new RetroArchError('full', `the host holds ${this.maxConnections} connections`) };
    const r = this.gate.admit(address, conn, now);
    if (!r.ok)
      return {
        ok: false,
        error: new RetroArchError(
          'full',
          `${this.gate.limits.maxPendingPerAddress} connections from ${address} are still in the handshake`,
        ),
      };
    this.live.add(conn);
    return { ok: true, evicted: r.evicted };
  }

  /** The error an evicted connection is closed with. */
  evictedError(): RetroArchError {
    return new RetroArchError(
      'timeout',
      `handshake not done in time: ${this.gate.limits.maxPending} newer connections are in the handshake`,
    );
  }

  /** The error an expired connection is closed with. */
  expiredError(): RetroArchError {
    return new RetroArchError('timeout', `no handshake within ${this.gate.limits.pendingTimeoutMs} ms`);
  }

  /** The connection finished the handshake: it no longer counts as pending. */
  joined(conn: C): void {
    this.gate.release(conn);
  }

  /** The connection closed. */
  gone(conn: C): void {
    this.gate.release(conn);
    this.live.delete(conn);
  }

  /** Connections pending for `pendingTimeoutMs` or longer at `now` (no longer counted as pending: close them). */
  expire(now: number): C[] {
    return this.gate.expire(now, []);
  }
}
