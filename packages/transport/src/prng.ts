/** The complete state of a {@link Prng}: four unsigned 32-bit words, not all zero. */
export type PrngState = readonly [number, number, number, number];

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * A seeded pseudo-random generator: xoshiro128** (Blackman & Vigna), 128 bits of state, period
 * 2^128 − 1. The same seed gives the same sequence on every platform. Not cryptographic: use it for
 * simulation and scheduling, never for secrets or session ids.
 */
export class Prng {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  /** Seeds the generator from a 32-bit integer (other numbers are reduced modulo 2^32). */
  constructor(seed = 0) {
    this.seed(seed);
  }

  /** Re-seeds in place, as if freshly constructed with `seed`. */
  seed(seed: number): void {
    const hi = Math.floor(seed / 0x1_0000_0000);
    const next = splitmix32((seed >>> 0) ^ Math.imul(hi >>> 0, 0x27d4eb2d));
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** The next unsigned 32-bit integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A float uniformly distributed in [0, 1), with 32 random bits. */
  nextFloat(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /**
   * An integer uniformly distributed in [lo, hi) (no modulo bias). Both bounds must be integers
   * with `hi − lo` in [1, 2^32].
   */
  int(lo: number, hi: number): number {
    const span = hi - lo;
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || span < 1 || span > 0x1_0000_0000) {
      throw new RangeError(`Prng.int(${lo}, ${hi}): need integers with 1 <= hi - lo <= 2^32`);
    }
    if (span === 0x1_0000_0000) return lo + this.nextU32();
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % span);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return lo + (x % span);
    }
  }

  /** True with probability `p` (p ≤ 0 never consumes a draw and is always false). */
  chance(p: number): boolean {
    if (!(p > 0)) return false;
    return this.nextFloat() < p;
  }

  /** Fills `target` with random bytes. */
  fill(target: Uint8Array): Uint8Array {
    let i = 0;
    for (; i + 4 <= target.length; i += 4) {
      const x = this.nextU32();
      target[i] = x;
      target[i + 1] = x >>> 8;
      target[i + 2] = x >>> 16;
      target[i + 3] = x >>> 24;
    }
    if (i < target.length) {
      let x = this.nextU32();
      for (; i < target.length; i++, x >>>= 8) target[i] = x;
    }
    return target;
  }

  /** The current state, to {@link restore} later (e.g. into a savestate). */
  save(): PrngState {
    return [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0];
  }

  /** Restores a state from {@link save}; the sequence continues exactly where it was. */
  restore(state: PrngState): void {
    const [a, b, c, d] = state;
    if ((a | b | c | d) === 0) throw new RangeError('Prng.restore: the all-zero state is invalid');
    this.a = a >>> 0;
    this.b = b >>> 0;
    this.c = c >>> 0;
    this.d = d >>> 0;
  }

  /** An independent copy at the same position. */
  clone(): Prng {
    const p = new Prng();
    p.restore(this.save());
    return p;
  }

  /** A new generator seeded from this one's next output (an independent-looking stream). */
  fork(): Prng {
    return new Prng(this.nextU32());
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
