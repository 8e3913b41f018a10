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
  private messages: number;
  private bytes: number;
  private last: number;
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  /** True once `take` has refused: the budget stays exhausted (the peer is to be disconnected). */
  exceeded = false;

  constructor(
    readonly limits: RateLimits,
    now: number,
  ) {
    validateRateLimits(limits);
    this.maxMessages = Math.max(1, limits.messagesPerSecond * limits.burstSeconds);
    this.maxBytes = Math.max(1, limits.bytesPerSecond * limits.burstSeconds);
    this.messages = this.maxMessages;
    this.bytes = this.maxBytes;
    this.last = now;
  }

  /** Charges one message of `bytes` at time `now` (ms); false when the peer is over its budget. */
  take(bytes: number, now: number): boolean {
    if (this.exceeded) return false;
    const dt = now - this.last;
    if (dt > 0) {
      this.last = now;
      this.messages = Math.min(this.maxMessages, this.messages + (dt * this.limits.messagesPerSecond) / 1000);
      this.bytes = Math.min(this.maxBytes, this.bytes + (dt * this.limits.bytesPerSecond) / 1000);
    }
    this.messages -= 1;
    this.bytes -= bytes;
    if (this.messages < 0 || this.bytes < 0) this.exceeded = true;
    return !this.exceeded;
  }

  /** A human-readable reason for the disconnect, naming the limits. */
  describe(): string {
    const l = this.limits;
    return `flood: over ${l.messagesPerSecond} messages/s or ${l.bytesPerSecond} bytes/s (burst ${l.burstSeconds} s)`;
  }
}
