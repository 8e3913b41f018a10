import { fc, test } from '@fast-check/vitest';
import { measureAllocation } from '@netplay/bench-kit';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  DELTA_HEADER_BYTES,
  DELTA_MAGIC,
  DELTA_VERSION,
  DELTA_VERSION_PAGED,
  DeltaBase,
  DeltaError,
  hash64,
  MAX_DELTA_TARGET_BYTES,
  MAX_INFLATE_RATIO,
  maxInflatedBytes,
  pageDelta,
  pagedHash64,
  xorDelta,
} from '../src/index.js';
import { nodeInflateBounded } from '../src/node.js';

/** Bytes (JS heap and `ArrayBuffer` backing stores, garbage included) allocated while `fn` runs once. */
function allocatedBytes(fn: () => void): number {
  const a = measureAllocation(fn, 1, 0);
  return a.heapBytes + a.externalBytes;
}

/** What `applyDelta` did: the result, or the error it threw. */
function outcome(fn: () => Uint8Array): { result?: Uint8Array; error?: unknown } {
  try {
    return { result: fn() };
  } catch (error) {
    return { error };
  }
}

/** The fields of a delta header (see the README's table), so a test can state any of them. */
interface Header {
  kind: number;
  shift: number;
  reserved: number;
  layoutHash: bigint;
  baseHash: bigint;
  targetHash: bigint;
  baseBytes: number;
  targetBytes: number;
  pageCount: number;
  /** 1 (hash64) unless given; 2 is a paged-hash page delta (`DeltaBase`). */
  version?: number;
}

/** A delta of `header` followed by `stream`, its compressed-size field telling the truth. */
function forge(header: Header, stream: Uint8Array): Uint8Array {
  const out = new Uint8Array(DELTA_HEADER_BYTES + stream.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, DELTA_MAGIC, true);
  out[4] = header.version ?? DELTA_VERSION;
  out[5] = header.kind;
  out[6] = header.shift;
  out[7] = header.reserved;
  dv.setBigUint64(8, header.layoutHash, true);
  dv.setBigUint64(16, header.baseHash, true);
  dv.setBigUint64(24, header.targetHash, true);
  dv.setUint32(32, header.baseBytes, true);
  dv.setUint32(36, header.targetBytes, true);
  dv.setUint32(40, header.pageCount, true);
  dv.setUint32(44, stream.length, true);
  out.set(stream, DELTA_HEADER_BYTES);
  return out;
}

/** Issue 13's input: a 48-byte header that checks out against `base` and announces a 1 GiB target, then 1 byte. */
function hostile(base: Uint8Array, kind: 1 | 2): Uint8Array {
  return forge(
    {
      kind,
      shift: kind === 1 ? 0 : 12,
      reserved: 0,
      layoutHash: 0n,
      baseHash: hash64(base),
      targetHash: 0n,
      baseBytes: base.length,
      targetBytes: 2 ** 30,
      pageCount: 0,
    },
    Uint8Array.of(0x78),
  );
}

/** zlib state, the header's bigints, the error: what any call may allocate beside the buffers the limit bounds. */
const FIXED_SLACK = 256 * 1024;

/**
 * What `applyDelta` may allocate under a target limit: the result, a page buffer, for a version 2
 * delta the page hashes of the result (8 bytes per page of at least 256 bytes; the base's, a few
 * hundred bytes here, fall in the slack), the fixed slack.
 */
function allocationBound(limit: number): number {
  return 2 * limit + 4 * Math.ceil(limit / 256) + 8 * Math.ceil(limit / 256) + FIXED_SLACK;
}

describe('applyDelta target limit', () => {
  it.each([1, 2] as const)(
    'regression (issue 13): a 49-byte delta announcing a 1 GiB target is too-large, with nothing allocated (kind %i)',
    (kind) => {
      for (const base of [new Uint8Array(0), new Uint8Array(4096).fill(7)]) {
        const d = hostile(base, kind);
        expect(d.length).toBe(49);
        let error: unknown;
        const bytes = allocatedBytes(() => {
          error = outcome(() => applyDelta(base, d)).error;
        });
        expect(error).toBeInstanceOf(DeltaError);
        expect((error as DeltaError).code).toBe('too-large');
        expect((error as DeltaError).message).toContain(`${2 ** 30} bytes`);
        expect((error as DeltaError).message).toContain(`limit of ${base.length} bytes`);
        expect(bytes).toBeLessThan(FIXED_SLACK);
      }
    },
  );

  it('with a limit of 4 GiB, a 49-byte XOR delta announcing 1 GiB is corrupt before allocation: 1 byte of zlib cannot inflate to it', () => {
    const base = new Uint8Array(100);
    let error: unknown;
    const bytes = allocatedBytes(() => {
      error = outcome(() => applyDelta(base, hostile(base, 1), { maxTargetBytes: MAX_DELTA_TARGET_BYTES })).error;
    });
    expect((error as DeltaError).code).toBe('corrupt');
    expect((error as DeltaError).message).toContain(`1-byte zlib stream cannot inflate to the ${2 ** 30} bytes`);
    expect(bytes).toBeLessThan(FIXED_SLACK);
  });

  it('a delta compressed close to the 1032:1 limit still applies (8 MiB of zeros)', () => {
    const base = new Uint8Array(8 << 20);
    const d = xorDelta(base, base, { layoutHash: 0n, level: 9 });
    expect((8 << 20) / (d.length - DELTA_HEADER_BYTES)).toBeGreaterThan(1000);
    const rebuilt = applyDelta(base, d);
    expect(rebuilt.length).toBe(base.length);
    expect(rebuilt.every((b) => b === 0)).toBe(true);
  });

  test.prop(
    [
      fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 1 << 16 })), {
        minLength: 1,
        maxLength: 8,
      }),
      fc.integer({ min: 0, max: 9 }),
    ],
    { numRuns: 40 },
  )('no zlib stream pako writes inflates to more than maxInflatedBytes of its size', (runs, level) => {
    const data = new Uint8Array(runs.reduce((n, [, len]) => n + len, 0));
    let o = 0;
    for (const [byte, len] of runs) {
      data.fill(byte, o, o + len);
      o += len;
    }
    const stream = deflate(data, { level });
    expect(data.length).toBeLessThanOrEqual(maxInflatedBytes(stream.length));
    expect(maxInflatedBytes(1)).toBe(MAX_INFLATE_RATIO);
  });

  it("the default limit is the base's size: a target of that size applies, one byte more is too-large", () => {
    const base = new Uint8Array(1000).fill(3);
    const same = Uint8Array.from(base, (b, i) => b ^ (i & 1));
    expect(applyDelta(base, pageDelta(base, same, { layoutHash: 0n }))).toEqual(same);
    const longer = new Uint8Array(1001).fill(9);
    for (const d of [xorDelta(base, longer, { layoutHash: 0n }), pageDelta(base, longer, { layoutHash: 0n })]) {
      const error = outcome(() => applyDelta(base, d)).error as DeltaError;
      expect(error).toBeInstanceOf(DeltaError);
      expect(error.code).toBe('too-large');
      expect(error.message).toContain('1001 bytes exceeds the limit of 1000 bytes');
      expect(applyDelta(base, d, { maxTargetBytes: 1001 })).toEqual(longer);
    }
  });

  it('an empty base takes a target only with an explicit maxTargetBytes', () => {
    const state = Uint8Array.from({ length: 300 }, (_, i) => i * 7);
    const d = xorDelta(new Uint8Array(0), state, { layoutHash: 0n });
    expect((outcome(() => applyDelta(new Uint8Array(0), d)).error as DeltaError).code).toBe('too-large');
    expect(applyDelta(new Uint8Array(0), d, { maxTargetBytes: state.length })).toEqual(state);
  });

  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, MAX_DELTA_TARGET_BYTES + 1])(
    'maxTargetBytes %s is bad-argument (a NaN limit would let every size through)',
    (maxTargetBytes) => {
      const base = new Uint8Array(10);
      const error = outcome(() => applyDelta(base, hostile(base, 1), { maxTargetBytes })).error as DeltaError;
      expect(error).toBeInstanceOf(DeltaError);
      expect(error.code).toBe('bad-argument');
    },
  );
});

/** Header fields in and around their valid ranges, sizes up to the format's 2^32 − 1. */
const size = fc.oneof(
  fc.integer({ min: 0, max: 4096 }),
  fc.integer({ min: 0, max: MAX_DELTA_TARGET_BYTES }),
  fc.constantFrom(2 ** 30, MAX_DELTA_TARGET_BYTES),
);
const anyHeader = fc.record({
  kind: fc.integer({ min: 0, max: 255 }),
  shift: fc.integer({ min: 0, max: 255 }),
  reserved: fc.integer({ min: 0, max: 255 }),
  layoutHash: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  targetHash: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  targetBytes: size,
  pageCount: fc.oneof(fc.integer({ min: 0, max: 16 }), size),
});
/** A header that passes `describeDelta`, so that only the sizes decide what happens next. */
const wellFormedHeader = fc.tuple(anyHeader, fc.boolean(), fc.integer({ min: 8, max: 20 })).map(([h, xor, shift]) => ({
  ...h,
  kind: xor ? 1 : 2,
  shift: xor ? 0 : shift,
  reserved: 0,
  pageCount: xor ? 0 : h.pageCount % (Math.ceil(h.targetBytes / 2 ** shift) + 1),
}));
const header = fc.oneof(wellFormedHeader, anyHeader);

/** A delta: a real one (then maybe damaged), or a forged header that matches the base, or any bytes. */
const hostileInput = fc.oneof(
  fc
    .tuple(fc.uint8Array({ maxLength: 2000 }), fc.uint8Array({ maxLength: 2000 }), fc.boolean(), fc.nat(), fc.nat())
    .map(([base, x, pages, at, flip]) => {
      const d = pages ? pageDelta(base, x, { layoutHash: 0n, pageSize: 256 }) : xorDelta(base, x, { layoutHash: 0n });
      if (flip % 3 === 0) d[at % d.length]! ^= 1 + (flip % 255);
      return { base, delta: d };
    }),
  fc
    .tuple(fc.uint8Array({ maxLength: 2000 }), fc.uint8Array({ maxLength: 2000 }), fc.nat(), fc.nat())
    .map(([base, x, at, flip]) => {
      const d = new DeltaBase(base, { layoutHash: 0n, pageSize: 256 }).pageDelta(x);
      if (flip % 3 === 0) d[at % d.length]! ^= 1 + (flip % 255);
      return { base, delta: d };
    }),
  fc.tuple(fc.uint8Array({ maxLength: 2000 }), header, fc.uint8Array({ maxLength: 64 })).map(([base, h, stream]) => ({
    base,
    delta: forge({ ...h, baseHash: hash64(base), baseBytes: base.length }, stream),
  })),
  fc
    .tuple(fc.uint8Array({ maxLength: 2000 }), wellFormedHeader, fc.uint8Array({ maxLength: 64 }))
    .map(([base, h, stream]) => ({
      base,
      delta: forge(
        {
          ...h,
          version: DELTA_VERSION_PAGED,
          kind: 2,
          shift: h.shift === 0 ? 8 : h.shift,
          baseHash: pagedHash64(base, 2 ** (h.shift === 0 ? 8 : h.shift)),
          baseBytes: base.length,
        },
        stream,
      ),
    })),
  fc.record({ base: fc.uint8Array({ maxLength: 200 }), delta: fc.uint8Array({ maxLength: 200 }) }),
);

/**
 * node:zlib's fixed cost is larger than pako's: each call builds a zlib handle, and each refusal a
 * Node error (about 25 KB of garbage), and the first error of each kind loads code (up to about
 * 0.75 MB, measured). Still a constant: what grows with the input is bounded by the limit as with pako.
 */
const NODE_FIXED_SLACK = 1024 * 1024;

describe.each([
  ['pako (default)', undefined, 0],
  ['node:zlib (nodeInflateBounded)', nodeInflateBounded, NODE_FIXED_SLACK - FIXED_SLACK],
] as const)('applyDelta on any bytes, inflating with %s', (_name, inflate, extraSlack) => {
  test.prop([hostileInput, fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 1 << 20 }))], { numRuns: 120 })(
    'returns a state within the limit or throws DeltaError, and allocates no more than the limit bounds',
    ({ base, delta }, maxTargetBytes) => {
      const limit = maxTargetBytes ?? base.length;
      let got: { result?: Uint8Array; error?: unknown } = {};
      const bytes = allocatedBytes(() => {
        got = outcome(() => applyDelta(base, delta, { maxTargetBytes, inflate }));
      });
      if (got.error !== undefined) expect(got.error).toBeInstanceOf(DeltaError);
      else expect(got.result!.length).toBeLessThanOrEqual(limit);
      expect(bytes).toBeLessThanOrEqual(allocationBound(limit) + extraSlack);
    },
  );
});

describe('nodeInflateBounded', () => {
  it('agrees with pako on real deltas, and refuses a bomb, trailing bytes and a cut stream as corrupt', () => {
    const base = new Uint8Array(50_000).map((_, i) => (i * 31) & 0xff);
    const x = base.slice();
    for (let i = 0; i < x.length; i += 999) x[i]! ^= 0x5a;
    for (const d of [xorDelta(base, x, { layoutHash: 0n }), pageDelta(base, x, { layoutHash: 0n, pageSize: 256 })])
      expect(applyDelta(base, d, { inflate: nodeInflateBounded })).toEqual(x);
    const bomb = deflate(new Uint8Array(4 << 20));
    const code = (f: () => Uint8Array) => (outcome(f).error as DeltaError).code;
    expect(code(() => nodeInflateBounded(bomb, 1 << 20))).toBe('corrupt');
    const z = deflate(x);
    expect(nodeInflateBounded(z, x.length)).toEqual(x);
    const trailing = new Uint8Array(z.length + 2);
    trailing.set(z);
    expect(code(() => nodeInflateBounded(trailing, x.length))).toBe('corrupt');
    expect(code(() => nodeInflateBounded(z.subarray(0, z.length - 3), x.length))).toBe('corrupt');
    expect(code(() => nodeInflateBounded(z, x.length - 1))).toBe('corrupt');
    expect(nodeInflateBounded(deflate(new Uint8Array(0)), 0)).toEqual(new Uint8Array(0));
    // A small output is copied out of Node's shared Buffer pool.
    const small = nodeInflateBounded(deflate(Uint8Array.of(1, 2, 3)), 3);
    expect(small.buffer.byteLength).toBe(3);
  });
});
