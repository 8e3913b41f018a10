import { LockstepError } from './errors.js';

/** Options of {@link PingHistory}. */
export interface PingHistoryOptions {
  /** Round-trip samples kept (default 64). */
  readonly size?: number;
  /** Percentile of the kept samples used as the estimate, 0..1 (default 0.9: conservative, as seed 004 asks). */
  readonly percentile?: number;
  /** One-way estimate in ms before the first sample (default 50). */
  readonly initialOneWayMs?: number;
  /**
   * Share (0..1) of the round-trip spread (percentile minus minimum) assumed to lie in one
   * direction, added on top of half the percentile (default 1: all of the variation may be on the
   * way there). 0 gives plain percentile / 2. With a steady link both give the exact one-way time.
   */
  readonly spreadShare?: number;
}

/**
 * The round-trip history of one peer (seed 004, "In Reality"): the last `size` ping round trips,
 * and a conservative one-way estimate: half the `percentile` of them, plus the share
 * `spreadShare` of half their spread above the minimum (jitter may all be on one direction).
 * Allocation-free after construction.
 */
export class PingHistory {
  private readonly samples: Float64Array;
  private readonly sorted: Float64Array;
  private count = 0;
  private head = 0;
  private readonly percentile: number;
  private readonly initial: number;
  private readonly spreadShare: number;
  private cached = -1;

  constructor(options: PingHistoryOptions = {}) {
    const size = options.size ?? 64;
    const percentile = options.percentile ?? 0.9;
    const initial = options.initialOneWayMs ?? 50;
    if (!Number.isInteger(size) || size < 1 || size > 65536)
      throw new LockstepError('bad-argument', `size must be 1..65536, got ${size}`);
    if (!(percentile >= 0 && percentile <= 1))
      throw new LockstepError('bad-argument', `percentile must be 0..1, got ${percentile}`);
    if (!(initial >= 0)) throw new LockstepError('bad-argument', `initialOneWayMs must be >= 0, got ${initial}`);
    const share = options.spreadShare ?? 1;
    if (!(share >= 0 && share <= 1)) throw new LockstepError('bad-argument', `spreadShare must be 0..1, got ${share}`);
    this.spreadShare = share;
    this.samples = new Float64Array(size);
    this.sorted = new Float64Array(size);
    this.percentile = percentile;
    this.initial = initial;
  }

  /** Number of samples held. */
  get length(): number {
    return this.count;
  }

  /** Adds a round-trip sample (ms); negative or non-finite samples are ignored. */
  add(rttMs: number): void {
    if (!(rttMs >= 0) || !Number.isFinite(rttMs)) return;
    this.samples[this.head] = rttMs;
    this.head = (this.head + 1) % this.samples.length;
    if (this.count < this.samples.length) this.count++;
    this.cached = -1;
  }

  /** The conservative one-way estimate in ms (the initial value until a sample exists). */
  oneWayMs(): number {
    if (this.count === 0) return this.initial;
    if (this.cached >= 0) return this.cached;
    const n = this.count;
    const s = this.sorted;
    for (let i = 0; i < n; i++) s[i] = this.samples[i]!;
    // Insertion sort: n is small and the array is reused, so nothing is allocated.
    for (let i = 1; i < n; i++) {
      const v = s[i]!;
      let j = i - 1;
      while (j >= 0 && s[j]! > v) {
        s[j + 1] = s[j]!;
        j--;
      }
      s[j + 1] = v;
    }
    const idx = Math.min(n - 1, Math.ceil(this.percentile * n) - 1);
    const p = s[Math.max(0, idx)]!;
    this.cached = p / 2 + (this.spreadShare * (p - s[0]!)) / 2;
    return this.cached;
  }
}
