import { inflateSync } from 'node:zlib';
import { fc, test } from '@fast-check/vitest';
import { inflate } from 'pako';
import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  compressionStreamDeflate,
  DeltaBase,
  type DeltaInfo,
  defaultDeflateAsync,
  describeDelta,
  hasCompressionStream,
  pageDelta,
  pageDeltaAsync,
  pakoDeflate,
  xorDelta,
  xorDeltaAsync,
} from '../src/index.js';
import { nodeDeflate, nodeDeflateAsync, nodeRangeCompare } from '../src/node.js';

const LAYOUT = 0x1357_9bdf_2468_ace0n;

/** A base and a state with a few byte runs changed (the pages, and so the deltas, are small). */
const baseAndState = fc
  .tuple(
    fc.uint8Array({ maxLength: 5000 }),
    fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 200 })), { maxLength: 6 }),
    fc.oneof(fc.constant(0), fc.integer({ min: -300, max: 300 })),
    fc.integer({ min: 0, max: 9 }),
  )
  .map(([base, edits, resize, level]) => {
    const n = Math.max(0, base.length + resize);
    const x = new Uint8Array(n);
    x.set(base.subarray(0, n));
    for (const [at, run] of edits) if (n > 0) x.set(run.subarray(0, n - (at % n)), at % n);
    return { base, x, level };
  });

const withoutSize = (i: DeltaInfo) => ({ ...i, compressedBytes: 0 });

describe('deltas are the same whichever zlib compressor made them', () => {
  it('CompressionStream exists here (Node 18+), so the async default is native', () => {
    expect(hasCompressionStream()).toBe(true);
  });

  test.prop([baseAndState], { numRuns: 60 })(
    'pako, node:zlib (sync and async) and CompressionStream deltas decode to the same body and rebuild the same state',
    async ({ base, x, level }) => {
      const opts = { layoutHash: LAYOUT, pageSize: 256, level };
      const v1 = [
        pageDelta(base, x, opts),
        pageDelta(base, x, { ...opts, deflate: nodeDeflate }),
        await pageDeltaAsync(base, x, opts),
        await pageDeltaAsync(base, x, { ...opts, deflate: nodeDeflateAsync }),
        await pageDeltaAsync(base, x, { ...opts, deflate: compressionStreamDeflate }),
      ];
      const db = new DeltaBase(base, { layoutHash: LAYOUT, pageSize: 256 });
      const v2 = [
        db.pageDelta(x, { level }),
        db.pageDelta(x, { level, deflate: nodeDeflate }),
        await db.pageDeltaAsync(x, { level }),
        await db.pageDeltaAsync(x, { level, deflate: nodeDeflateAsync }),
        await db.pageDeltaAsync(x, { level, deflate: defaultDeflateAsync }),
      ];
      const expected = Uint8Array.from(x);
      for (const group of [v1, v2]) {
        const body = inflate(group[0]!.subarray(48));
        for (const d of group) {
          expect(withoutSize(describeDelta(d))).toEqual(withoutSize(describeDelta(group[0]!)));
          // Any inflater reads any of them: pako's and node:zlib's.
          expect(inflate(d.subarray(48))).toEqual(body);
          expect(new Uint8Array(inflateSync(d.subarray(48)))).toEqual(body);
          expect(applyDelta(base, d, { layoutHash: LAYOUT, maxTargetBytes: x.length })).toEqual(expected);
        }
      }
    },
  );

  test.prop([baseAndState], { numRuns: 60 })(
    'XOR deltas: pako streamed (default), node:zlib (sync and async) and CompressionStream give the same header and body, and every inflater reads them',
    async ({ base, x, level }) => {
      const opts = { layoutHash: LAYOUT, level };
      const streamed = xorDelta(base, x, opts);
      // pako over the whole XOR at once writes the same bytes as pako streamed through 256 KiB.
      expect(xorDelta(base, x, { ...opts, deflate: pakoDeflate })).toEqual(streamed);
      const deltas = [
        streamed,
        xorDelta(base, x, { ...opts, deflate: nodeDeflate }),
        await xorDeltaAsync(base, x, opts),
        await xorDeltaAsync(base, x, { ...opts, deflate: nodeDeflateAsync }),
        await xorDeltaAsync(base, x, { ...opts, deflate: compressionStreamDeflate }),
        await xorDeltaAsync(base, x, { ...opts, deflate: async (d, l) => pakoDeflate(d, l) }),
      ];
      const body = inflate(streamed.subarray(48));
      const expected = Uint8Array.from(x);
      for (const d of deltas) {
        expect(withoutSize(describeDelta(d))).toEqual(withoutSize(describeDelta(streamed)));
        expect(describeDelta(d).kind).toBe('xor');
        expect(inflate(d.subarray(48))).toEqual(body);
        expect(new Uint8Array(inflateSync(d.subarray(48)))).toEqual(body);
        expect(applyDelta(base, d, { layoutHash: LAYOUT, maxTargetBytes: x.length })).toEqual(expected);
      }
    },
  );

  it('xorDeltaAsync reads base and state before it returns: changing them while it is pending changes nothing', async () => {
    const base = new Uint8Array(70_000).map((_, i) => (i * 7) & 0xff);
    const x = base.slice();
    x[12_345] = 1;
    const want = Uint8Array.from(x);
    const pending = xorDeltaAsync(base, x, { layoutHash: LAYOUT });
    const original = base.slice();
    x.fill(9);
    const d = await pending;
    expect(applyDelta(original, d, { layoutHash: LAYOUT })).toEqual(want);
  });

  test.prop([fc.uint8Array({ maxLength: 20_000 }), fc.integer({ min: 0, max: 9 })], { numRuns: 40 })(
    'each compressor writes a zlib stream the other inflater reads back',
    async (data, level) => {
      for (const z of [
        pakoDeflate(data, level),
        nodeDeflate(data, level),
        await compressionStreamDeflate(data, level),
      ]) {
        expect(inflate(z)).toEqual(data);
        expect(new Uint8Array(inflateSync(z))).toEqual(data);
      }
    },
  );

  test.prop([baseAndState], { numRuns: 60 })(
    'the native page compare (nodeRangeCompare) finds the same pages as the JavaScript one',
    ({ base, x }) => {
      const js = new DeltaBase(base, { layoutHash: LAYOUT, pageSize: 256 });
      const native = new DeltaBase(base, { layoutHash: LAYOUT, pageSize: 256, compare: nodeRangeCompare() });
      expect(native.pageDelta(x)).toEqual(js.pageDelta(x));
      const y = x.slice(); // a second state through the same comparator (its cached views change)
      if (y.length > 0) y[y.length - 1]! ^= 0xff;
      expect(native.pageDelta(y)).toEqual(js.pageDelta(y));
    },
  );

  it('rejects a bad level with the injected compressors too', async () => {
    const base = new Uint8Array(1000);
    expect(() => pageDelta(base, base, { layoutHash: 0n, level: 10, deflate: nodeDeflate })).toThrow(
      expect.objectContaining({ code: 'bad-argument' }),
    );
    await expect(pageDeltaAsync(base, base, { layoutHash: 0n, level: -1 })).rejects.toMatchObject({
      code: 'bad-argument',
    });
    expect(() => new DeltaBase(base, { layoutHash: 0n }).pageDelta(base, { level: 1.5 })).toThrow(
      expect.objectContaining({ code: 'bad-argument' }),
    );
    expect(() => xorDelta(base, base, { layoutHash: 0n, level: 10, deflate: nodeDeflate })).toThrow(
      expect.objectContaining({ code: 'bad-argument' }),
    );
    await expect(xorDeltaAsync(base, base, { layoutHash: 0n, level: -1 })).rejects.toMatchObject({
      code: 'bad-argument',
    });
  });
});
