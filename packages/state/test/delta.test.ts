import { fc, test } from '@fast-check/vitest';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  DELTA_HEADER_BYTES,
  DeltaError,
  describeDelta,
  hash64,
  pageDelta,
  xorDelta,
} from '../src/index.js';

const LAYOUT = 0x0123_4567_89ab_cdefn;
const kinds = {
  xor: (b: Uint8Array, x: Uint8Array) => xorDelta(b, x, { layoutHash: LAYOUT }),
  pages: (b: Uint8Array, x: Uint8Array) => pageDelta(b, x, { layoutHash: LAYOUT, pageSize: 256 }),
};

/** A base and a state derived from it: a few byte runs changed, maybe resized. */
const baseAndState = fc
  .tuple(
    fc.uint8Array({ maxLength: 3000 }),
    fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 40 })), { maxLength: 6 }),
    fc.oneof(fc.constant(0), fc.integer({ min: -600, max: 600 })),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([base, edits, resize, shift]) => {
    const n = Math.max(0, base.length + resize);
    const x = new Uint8Array(n);
    x.set(base.subarray(0, n));
    for (const [at, run] of edits) if (n > 0) x.set(run.subarray(0, Math.max(0, n - (at % n))), at % n);
    // Put the state at an odd offset sometimes, to exercise the unaligned paths.
    const holder = new Uint8Array(n + shift);
    holder.set(x, shift);
    return { base, x: holder.subarray(shift) };
  });

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe.each(Object.entries(kinds))('%s delta', (kind, diff) => {
  test.prop([baseAndState], { numRuns: 150 })('apply(base, diff(base, x)) equals x', ({ base, x }) => {
    const d = diff(base, x);
    const info = describeDelta(d);
    expect(info.kind).toBe(kind);
    expect(info.baseBytes).toBe(base.length);
    expect(info.targetBytes).toBe(x.length);
    expect(info.layoutHash).toBe(LAYOUT);
    expect(applyDelta(base, d, { layoutHash: LAYOUT, maxTargetBytes: x.length })).toEqual(new Uint8Array(x));
    if (x.length <= base.length) expect(applyDelta(base, d, { layoutHash: LAYOUT })).toEqual(new Uint8Array(x));
    else expect((errorOf(() => applyDelta(base, d, { layoutHash: LAYOUT })) as DeltaError).code).toBe('too-large');
  });

  test.prop([baseAndState, fc.nat(), fc.integer({ min: 1, max: 255 })], { numRuns: 150 })(
    'a delta with one byte changed throws only DeltaError, or still gives x',
    ({ base, x }, at, delta) => {
      const d = diff(base, x);
      d[at % d.length] = (d[at % d.length]! + delta) & 0xff;
      const err = errorOf(() => {
        expect(applyDelta(base, d, { layoutHash: LAYOUT, maxTargetBytes: x.length })).toEqual(new Uint8Array(x));
      });
      if (err !== undefined) expect(err).toBeInstanceOf(DeltaError);
    },
  );

  test.prop([baseAndState, fc.uint8Array({ minLength: 1, maxLength: 64 })], { numRuns: 80 })(
    'the wrong base is refused',
    ({ base, x }, other) => {
      const d = diff(base, x);
      const wrong = Uint8Array.from(base);
      if (wrong.length > 0) wrong[other[0]! % wrong.length]! ^= 1;
      else return;
      const maxTargetBytes = x.length;
      expect((errorOf(() => applyDelta(wrong, d, { maxTargetBytes })) as DeltaError).code).toBe('wrong-base');
      expect((errorOf(() => applyDelta(Uint8Array.from([...base, ...other]), d)) as DeltaError).code).toBe(
        'wrong-base',
      );
    },
  );

  it('the wrong layout is refused', () => {
    const base = new Uint8Array(1000);
    const d = diff(base, base);
    expect((errorOf(() => applyDelta(base, d, { layoutHash: LAYOUT + 1n })) as DeltaError).code).toBe('wrong-layout');
  });

  it('refuses a stated target larger than the limit before inflating', () => {
    const base = new Uint8Array(1000);
    const d = diff(base, new Uint8Array(5000));
    expect((errorOf(() => applyDelta(base, d, { maxTargetBytes: 4999 })) as DeltaError).code).toBe('too-large');
    expect(applyDelta(base, d, { maxTargetBytes: 5000 }).length).toBe(5000);
  });
});

describe('hostile deltas', () => {
  test.prop([fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 100 })], { numRuns: 300 })(
    'any bytes throw only DeltaError',
    (bytes, base) => {
      const err = errorOf(() => applyDelta(base, bytes));
      expect(err).toBeInstanceOf(DeltaError);
    },
  );

  /** A valid header around any zlib stream, with stated sizes. */
  function forge(
    kind: 1 | 2,
    base: Uint8Array,
    targetBytes: number,
    pageCount: number,
    stream: Uint8Array,
  ): Uint8Array {
    const good =
      kind === 1
        ? xorDelta(base, new Uint8Array(targetBytes), { layoutHash: 1n })
        : pageDelta(base, new Uint8Array(targetBytes), { layoutHash: 1n, pageSize: 256 });
    const out = new Uint8Array(DELTA_HEADER_BYTES + stream.length);
    out.set(good.subarray(0, DELTA_HEADER_BYTES));
    const dv = new DataView(out.buffer);
    dv.setUint32(40, pageCount, true);
    dv.setUint32(44, stream.length, true);
    out.set(stream, DELTA_HEADER_BYTES);
    return out;
  }

  it('a stream that inflates past the stated size is corrupt (a zip bomb inflates no further)', () => {
    const base = new Uint8Array(100);
    const bomb = deflate(new Uint8Array(10_000_000));
    const err = errorOf(() => applyDelta(base, forge(1, base, 100, 0, bomb))) as DeltaError;
    expect(err.code).toBe('corrupt');
    expect(err.message).toMatch(/more than the stated size/);
    const err2 = errorOf(() => applyDelta(base, forge(2, base, 1000, 2, bomb), { maxTargetBytes: 1000 })) as DeltaError;
    expect(err2.code).toBe('corrupt');
  });

  it('a stream shorter than stated, unordered page indexes and stray bytes are corrupt', () => {
    const base = new Uint8Array(1024);
    expect(
      (errorOf(() => applyDelta(base, forge(1, base, 1024, 0, deflate(new Uint8Array(1000))))) as DeltaError).code,
    ).toBe('corrupt');
    const pages = new Uint8Array(8 + 512);
    new DataView(pages.buffer).setUint32(0, 2, true);
    new DataView(pages.buffer).setUint32(4, 1, true);
    expect((errorOf(() => applyDelta(base, forge(2, base, 1024, 2, deflate(pages)))) as DeltaError).message).toMatch(
      /out of order/,
    );
    const past = new Uint8Array(4 + 256);
    new DataView(past.buffer).setUint32(0, 4, true);
    expect((errorOf(() => applyDelta(base, forge(2, base, 1024, 1, deflate(past)))) as DeltaError).message).toMatch(
      /past the target/,
    );
    expect((errorOf(() => applyDelta(base, forge(2, base, 1024, 5, deflate(past)))) as DeltaError).message).toMatch(
      /pages listed/,
    );
    const stray = Uint8Array.from([...deflate(new Uint8Array(1024)), 0]);
    expect((errorOf(() => applyDelta(base, forge(1, base, 1024, 0, stray))) as DeltaError).message).toMatch(
      /after the compressed data/,
    );
  });
});

describe('page delta size', () => {
  it('sends only the changed pages', () => {
    const base = new Uint8Array(1 << 20);
    for (let i = 0; i < base.length; i++) base[i] = (i * 2654435761) >>> 24;
    const x = base.slice();
    for (const p of [3, 100, 200]) x[p * 4096 + 17]! ^= 0xff;
    const d = pageDelta(base, x, { layoutHash: 0n });
    expect(describeDelta(d).pageCount).toBe(3);
    expect(d.length).toBeLessThan(DELTA_HEADER_BYTES + 200);
    const y = applyDelta(base, d);
    expect(y.length).toBe(x.length);
    expect(y.every((b, i) => b === x[i])).toBe(true);
  });
});

describe('known base hash', () => {
  test.prop([baseAndState], { numRuns: 40 })(
    'passing hash64(base) and hash64(x) gives the same delta and result',
    ({ base, x }) => {
      const baseHash = hash64(base);
      const d = pageDelta(base, x, { layoutHash: LAYOUT, baseHash, targetHash: hash64(x) });
      expect(d).toEqual(pageDelta(base, x, { layoutHash: LAYOUT }));
      expect(xorDelta(base, x, { layoutHash: LAYOUT, baseHash, targetHash: hash64(x) })).toEqual(
        xorDelta(base, x, { layoutHash: LAYOUT }),
      );
      expect(applyDelta(base, d, { baseHash, maxTargetBytes: x.length })).toEqual(new Uint8Array(x));
    },
  );
});

describe('delta options', () => {
  it('refuses a bad page size or level', () => {
    const b = new Uint8Array(10);
    for (const pageSize of [0, 100, 128, 3000, 2 ** 21]) {
      expect((errorOf(() => pageDelta(b, b, { layoutHash: 0n, pageSize })) as DeltaError).code).toBe('bad-argument');
    }
    for (const level of [-1, 10, 1.5]) {
      expect((errorOf(() => xorDelta(b, b, { layoutHash: 0n, level })) as DeltaError).code).toBe('bad-argument');
    }
  });
});
