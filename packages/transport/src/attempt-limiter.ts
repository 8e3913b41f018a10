/** Back-off after failed authentication attempts; see {@link AttemptLimiter}. */
export interface AttemptLimits {
  /** Failures from one address allowed without waiting (default 3). */
  readonly freeFailures: number;
  /** Wait after the first failure past the free ones, in ms; it doubles with each further failure (default 1000). */
  readonly baseBackoffMs: number;
  /** Longest wait, in ms (default 60000). */
  readonly maxBackoffMs: number;
  /** An address with no attempt for this long is forgotten, in ms (default 600000). */
  readonly forgetMs: number;
  /** Addresses remembered at most; the least recently seen is forgotten first (default 4096). */
  readonly maxAddresses: number;
}

/** The defaults for {@link AttemptLimits}. */
export const DEFAULT_ATTEMPT_LIMITS: AttemptLimits = Object.freeze({
  freeFailures: 3,
  baseBackoffMs: 1000,
  maxBackoffMs: 60_000,
  forgetMs: 600_000,
  maxAddresses: 4096,
});

interface Record {
  failures: number;
  blockedUntil: number;
  lastSeen: number;
}

/**
 * Limits password (or any credential) attempts per source address: after `freeFailures` failures an
 * address must wait `baseBackoffMs`, doubling with every further failure up to `maxBackoffMs`; a
 * success forgets the address. Memory is bounded by `maxAddresses`. Time comes from the caller (ms).
 */
export class AttemptLimiter {
  private readonly records = new Map<string, Record>();

  constructor(
    /** The thresholds and back-off times this limiter applies, fixed for its life (default {@link DEFAULT_ATTEMPT_LIMITS}; the constructor throws `RangeError` on a bad one). */
    readonly limits: AttemptLimits = DEFAULT_ATTEMPT_LIMITS,
  ) {
    for (const key of ['baseBackoffMs', 'maxBackoffMs', 'forgetMs'] as const) {
      const v = limits[key];
      if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
        throw new RangeError(`attempt limit ${key} must be a positive finite number, got ${String(v)}`);
      }
    }
    if (!Number.isInteger(limits.freeFailures) || limits.freeFailures < 0) {
      throw new RangeError(`attempt limit freeFailures must be an integer ≥ 0, got ${String(limits.freeFailures)}`);
    }
    if (!Number.isInteger(limits.maxAddresses) || limits.maxAddresses < 1) {
      throw new RangeError(`attempt limit maxAddresses must be an integer ≥ 1, got ${String(limits.maxAddresses)}`);
    }
  }

  /** Addresses remembered now. */
  get size(): number {
    return this.records.size;
  }

  /** How long `address` must still wait before its next attempt, in ms (0: it may try now). */
  waitMs(address: string, now: number): number {
    const r = this.records.get(address);
    if (r === undefined) return 0;
    if (now - r.lastSeen >= this.limits.forgetMs) {
      this.records.delete(address);
      return 0;
    }
    return Math.max(0, r.blockedUntil - now);
  }

  /** Records a failed attempt of `address` at `now`; returns the wait now required of it, in ms. */
  fail(address: string, now: number): number {
    let r = this.records.get(address);
    if (r !== undefined && now - r.lastSeen >= this.limits.forgetMs) r = undefined;
    if (r === undefined) r = { failures: 0, blockedUntil: 0, lastSeen: now };
    this.records.delete(address); // re-inserted below: the Map's order is least recently seen first
    r.failures++;
    r.lastSeen = now;
    const over = r.failures - this.limits.freeFailures;
    if (over > 0) {
      const wait = Math.min(this.limits.maxBackoffMs, this.limits.baseBackoffMs * 2 ** Math.min(30, over - 1));
      r.blockedUntil = now + wait;
    }
    this.records.set(address, r);
    while (this.records.size > this.limits.maxAddresses) {
      const oldest = this.records.keys().next().value as string;
      this.records.delete(oldest);
    }
    return Math.max(0, r.blockedUntil - now);
  }

  /** A successful attempt: `address` is forgotten. */
  succeed(address: string): void {
    this.records.delete(address);
  }
}
