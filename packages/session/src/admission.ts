import {
  AdmissionGate,
  type AdmissionLimits,
  AttemptLimiter,
  type AttemptLimits,
  addressKey,
  DEFAULT_ADMISSION_LIMITS,
  DEFAULT_ATTEMPT_LIMITS,
  DEFAULT_RATE_LIMITS,
  RateBudget,
  type RateLimits,
  validateRateLimits,
} from '@netplay/transport';
import { SessionError } from './errors.js';

/** The host's defenses against unauthenticated and misbehaving peers (options of {@link NetplayHost}). */
export interface HostAdmissionOptions {
  /**
   * Caps on connections that have not finished the handshake (before SYNC or a spectator's
   * admission), counted apart from players and spectators: `maxPending` in total (default 64; a
   * newer one evicts the oldest of the address holding the most) and `maxPendingPerAddress` from one
   * address (default 8; more are refused). The pre-auth timeout is `handshakeTimeoutMs`.
   */
  readonly admission?: Partial<Omit<AdmissionLimits, 'pendingTimeoutMs'>>;
  /**
   * Password attempts per source address (default {@link DEFAULT_ATTEMPT_LIMITS}: 3 free failures,
   * then a back-off from 1 s doubling up to 60 s); a blocked address is refused with
   * `too-many-attempts` before its password is checked.
   */
  readonly attempts?: Partial<AttemptLimits>;
  /**
   * Each client's budget of messages and bytes per second, counted by the host over whatever
   * connection it is given (default {@link DEFAULT_RATE_LIMITS}); past it the client is refused with
   * `flood` and disconnected. `false` disables it.
   */
  readonly rateLimits?: RateLimits | false;
}

/** The pre-auth timeout when none is given: {@link DEFAULT_ADMISSION_LIMITS}' `pendingTimeoutMs` (5 s). */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = DEFAULT_ADMISSION_LIMITS.pendingTimeoutMs;

/** What {@link HostGuard.arrive} decided for a new connection. */
export type Arrival<P> =
  | { readonly ok: true; readonly evicted: P | undefined }
  | { readonly ok: false; readonly error: SessionError };

/**
 * The host's admission rules in one place, built on @netplay/transport's primitives: an
 * {@link AdmissionGate} of peers still in the handshake, an {@link AttemptLimiter} of password
 * failures per address, and one {@link RateBudget} per client. Sans-I/O: time comes from the caller.
 */
export class HostGuard<P> {
  readonly gate: AdmissionGate<P>;
  readonly attempts: AttemptLimiter;
  readonly rateLimits: RateLimits | undefined;

  /** @throws SessionError `bad-argument` for a limit out of range. */
  constructor(options: HostAdmissionOptions, handshakeTimeoutMs: number) {
    try {
      this.gate = new AdmissionGate<P>({
        ...DEFAULT_ADMISSION_LIMITS,
        ...options.admission,
        pendingTimeoutMs: handshakeTimeoutMs,
      });
      this.attempts = new AttemptLimiter({ ...DEFAULT_ATTEMPT_LIMITS, ...options.attempts });
      const r = options.rateLimits ?? DEFAULT_RATE_LIMITS;
      this.rateLimits = r === false ? undefined : validateRateLimits(r);
    } catch (e) {
      if (e instanceof RangeError) throw new SessionError('bad-argument', e.message);
      throw e;
    }
  }

  /** The per-address key of a transport's remote address (host without port). */
  static addressOf(remoteAddress: string): string {
    return addressKey(remoteAddress);
  }

  /**
   * A connection arrived from `address`: it counts as pending until {@link authenticated} or
   * {@link gone}. Refused when its address already holds `maxPendingPerAddress` pending ones;
   * `evicted` is an older pending peer the caller must refuse now.
   */
  arrive(peer: P, address: string, now: number): Arrival<P> {
    const r = this.gate.admit(address, peer, now);
    if (r.ok) return { ok: true, evicted: r.evicted };
    const max = this.gate.limits.maxPendingPerAddress;
    return {
      ok: false,
      error: new SessionError(
        'server-full',
        `server busy: ${max} connections from ${address} are still in the handshake`,
      ),
    };
  }

  /** The error an evicted pending peer is refused with. */
  evictedError(): SessionError {
    return new SessionError(
      'timeout',
      `handshake not done in time: ${this.gate.limits.maxPending} newer connections are in the handshake`,
    );
  }

  /** The peer passed the handshake (or was refused, or closed): it no longer counts as pending. */
  authenticated(peer: P): void {
    this.gate.release(peer);
  }

  /** Same as {@link authenticated}: the peer is gone. */
  gone(peer: P): void {
    this.gate.release(peer);
  }

  /** A new client's rate budget, or undefined when rate limits are off. */
  budget(now: number): RateBudget | undefined {
    return this.rateLimits === undefined ? undefined : new RateBudget(this.rateLimits, now);
  }

  /** The refusal of a client over its budget. */
  floodError(budget: RateBudget): SessionError {
    return new SessionError('flood', budget.describe().replace(/^flood: /, 'sent '));
  }

  /** `too-many-attempts` when `address` must still wait before trying a password; undefined when it may try. */
  blocked(address: string, now: number): SessionError | undefined {
    const wait = this.attempts.waitMs(address, now);
    if (wait <= 0) return undefined;
    return new SessionError(
      'too-many-attempts',
      `too many wrong passwords from ${address}: retry in ${Math.ceil(wait)} ms`,
    );
  }

  /** A wrong (or missing) password from `address`: records it; the refusal names the wait it now has. */
  failed(address: string, now: number, message: string): SessionError {
    const wait = this.attempts.fail(address, now);
    return new SessionError('bad-password', wait > 0 ? `${message} (next attempt in ${Math.ceil(wait)} ms)` : message);
  }

  /** A right password from `address`: its failures are forgotten. */
  succeeded(address: string): void {
    this.attempts.succeed(address);
  }
}
