import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { Prng } from '../src/prng.js';

describe('Prng (xoshiro128**)', () => {
  it('matches the reference C implementation from state {1, 2, 3, 4}', () => {
    // Output of Blackman & Vigna's xoshiro128starstar.c, compiled with gcc and seeded s = {1,2,3,4}.
    const p = new Prng();
    p.restore([1, 2, 3, 4]);
    expect([p.nextU32(), p.nextU32(), p.nextU32(), p.nextU32(), p.nextU32(), p.nextU32()]).toEqual([
      11520, 0, 5927040, 70819200, 2031721883, 1637235492,
    ]);
  });

  test.prop([fc.integer(), fc.integer({ min: 0, max: 50 })])('same seed, same sequence', (seed, skip) => {
    const a = new Prng(seed);
    const b = new Prng(seed);
    for (let i = 0; i < skip; i++) expect(a.nextU32()).toBe(b.nextU32());
    expect(a.save()).toEqual(b.save());
  });

  test.prop([fc.integer(), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 30 })])(
    'save/restore continues exactly where it was',
    (seed, before, after) => {
      const a = new Prng(seed);
      for (let i = 0; i < before; i++) a.nextU32();
      const state = a.save();
      const expected = Array.from({ length: after }, () => a.nextU32());
      const b = new Prng(12345);
      b.restore(state);
      expect(Array.from({ length: after }, () => b.nextU32())).toEqual(expected);
      const c = a.clone();
      expect(c.nextU32()).toBe(a.nextU32());
    },
  );

  test.prop([fc.integer(), fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 1, max: 2 ** 32 })])(
    'int(lo, hi) stays in [lo, hi)',
    (seed, lo, span) => {
      const p = new Prng(seed);
      for (let i = 0; i < 20; i++) {
        const x = p.int(lo, lo + span);
        expect(Number.isInteger(x)).toBe(true);
        expect(x).toBeGreaterThanOrEqual(lo);
        expect(x).toBeLessThan(lo + span);
      }
    },
  );

  test.prop([fc.integer()])('nextFloat is in [0, 1)', (seed) => {
    const p = new Prng(seed);
    for (let i = 0; i < 50; i++) {
      const f = p.nextFloat();
      expect(f >= 0 && f < 1).toBe(true);
    }
  });

  it('int is roughly uniform (chi-square over 10 buckets)', () => {
    const p = new Prng(7);
    const n = 100_000;
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < n; i++) counts[p.int(0, 10)]!++;
    const expected = n / 10;
    const chi = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    // 9 degrees of freedom: P(chi² > 27.88) = 0.001.
    expect(chi).toBeLessThan(27.88);
  });

  it('different seeds give different streams, including seeds differing above 32 bits', () => {
    const first = (seed: number) => new Prng(seed).nextU32();
    expect(first(1)).not.toBe(first(2));
    expect(first(5)).not.toBe(first(5 + 2 ** 32));
  });

  it('rejects bad ranges and the all-zero state', () => {
    const p = new Prng(1);
    expect(() => p.int(5, 5)).toThrow(RangeError);
    expect(() => p.int(0, 1.5)).toThrow(RangeError);
    expect(() => p.restore([0, 0, 0, 0])).toThrow(RangeError);
  });

  it('fill writes every byte position, chance(0) never fires and chance(1) always does', () => {
    const p = new Prng(3);
    const seen = new Uint8Array(7);
    for (let round = 0; round < 64; round++) {
      const b = p.fill(new Uint8Array(7));
      for (let i = 0; i < 7; i++) seen[i]! |= b[i]!;
    }
    expect([...seen].every((x) => x === 0xff)).toBe(true);
    for (let i = 0; i < 100; i++) {
      expect(p.chance(0)).toBe(false);
      expect(p.chance(1)).toBe(true);
    }
  });
});
