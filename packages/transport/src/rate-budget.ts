/** A per-peer budget of messages and bytes per second; see {@link RateBudget}. */
export interface RateLimits {
  /** Messages per second a peer may send on average. */
  readonly messagesPerSecond: number;
  /** Bytes per second a peer may send on average (payload or wire bytes, as the caller counts them). */
  readonly bytesPerSecond: number;
  /** How many seconds of the average rate may arrive at once (the bucket's depth). */
  readonly burstSeconds: number;
}

/**
 * Generous defaults: a 16-player game at 60 fps sends one peer well under 200 messages and 64 KiB
 * a second; these allow 4,000 messages and 4 MiB a second, with bursts of up to 2 seconds' worth
 * (a 8 MiB savestate arrives whole).
 */
export const DEFAULT_RATE_LIMITS: RateLimits = Object.freeze({
  messagesPerSecond: 4000,
  bytesPerSecond: 4 * 1024 * 1024,
  burstSeconds: 2,
});

/** Checks a {@link RateLimits} value; returns it, or throws `RangeError` naming the bad field. */
export function validateRateLimits(limits: RateLimits): RateLimits {
  for (const key of ['messagesPerSecond', 'bytesPerSecond', 'burstSeconds'] as const) {
    const v = limits[key];
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
      throw new RangeError(`rate limit ${key} must be a positive finite number, got ${String(v)}`);
    }
  }
  return limits;
}

/**
 * Two token buckets (messages and bytes) that refill continuously at the configured rates and hold
 * at most `burstSeconds` of them. `take` charges one message; when either bucket would go negative it
 * returns false and the caller disconnects the peer (reason `flood`). Time comes from the caller
 * (any clock, ms); nothing is allocated per call.
 */
export class RateBudget {
  /**
   * [messages left, bytes left, time of the last refill, most messages, most bytes, messages per ms,
   * bytes per ms]. One typed array instead of number fields: V8 boxes a double stored in an object
   * field (a heap number per store), which made `take` allocate 48 B a call.
   */
  private readonly s = new Float64Array(7);
  /** True once `take` has refused: the budget stays exhausted (the peer is to be disconnected). */
  exceeded = false;

  constructor(
    /** The rates and burst this budget allows, fixed for its life (checked by {@link validateRateLimits}). */
    readonly limits: RateLimits,
    now: number,
  ) {
    validateRateLimits(limits);
    const s = this.s;
    s[3] = Math.max(1, limits.messagesPerSecond * limits.burstSeconds);
    s[4] = Math.max(1, limits.bytesPerSecond * limits.burstSeconds);
    s[0] = s[3];
    s[1] = s[4];
    s[2] = now;
    s[5] = limits.messagesPerSecond / 1000;
    s[6] = limits.bytesPerSecond / 1000;
  }

  /** Charges one message of `bytes` at time `now` (ms); false when the peer is over its budget. */
  take(bytes: number, now: number): boolean {
    if (this.exceeded) return false;
    const s = this.s;
    const dt = now - (s[2] as number);
    if (dt > 0) {
      s[2] = now;
      s[0] = Math.min(s[3] as number, (s[0] as number) + dt * (s[5] as number));
      s[1] = Math.min(s[4] as number, (s[1] as number) + dt * (s[6] as number));
    }
    s[0] = (s[0] as number) - 1;
    s[1] = (s[1] as number) - bytes;
    if ((s[0] as number) < 0 || (s[1] as number) < 0) this.exceeded = true;
    return !this.exceeded;
  }

  /** A human-readable reason for the disconnect, naming the limits. */
  describe(): string {
    const l = this.limits;
    return `flood: over ${l.messagesPerSecond} messages/s or ${l.bytesPerSecond} bytes/s (burst ${l.burstSeconds} s)`;
  }
}
