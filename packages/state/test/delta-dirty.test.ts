import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  applyDelta,
  DELTA_VERSION_PAGED,
  DeltaBase,
  DeltaError,
  describeDelta,
  hash64,
  PageTracker,
  pageDelta,
  pagedHash64,
} from '../src/index.js';
import { TestCore } from '../src/testing/index.js';

const LAYOUT = 0x0bad_cafe_1234_5678n;

/**
 * A base, a state made from it by a list of byte runs written at offsets (maybe resized), and the
 * ranges written (in the state's coordinates): what a core marking its writes would report.
 */
const baseAndWrites = fc
  .tuple(
    fc.uint8Array({ maxLength: 6000 }),
    fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 300 })), { maxLength: 8 }),
    fc.oneof(fc.constant(0), fc.integer({ min: -700, max: 700 })),
    fc.constantFrom(256, 512, 1024, 4096),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([base, edits, resize, pageSize, shift]) => {
    const n = Math.max(0, base.length + resize);
    const x = new Uint8Array(n);
    x.set(base.subarray(0, n));
    const writes: [number, number][] = [];
    for (const [at, run] of edits) {
      if (n === 0) continue;
      const o = at % n;
      const bytes = run.subarray(0, n - o);
      x.set(bytes, o);
      writes.push([o, bytes.length]);
    }
    const holder = new Uint8Array(n + shift); // odd offsets exercise the unaligned compare
    holder.set(x, shift);
    return { base, x: holder.subarray(shift), writes, pageSize };
  });

/** Pages of `x` that differ from `base` (base read as zeros past its end). */
function changedPages(base: Uint8Array, x: Uint8Array, pageSize: number): number {
  let count = 0;
  for (let p = 0; p * pageSize < x.length; p++) {
    for (let i = p * pageSize; i < Math.min(x.length, (p + 1) * pageSize); i++) {
      if ((i < base.length ? base[i] : 0) !== x[i]) {
        count++;
        break;
      }
    }
  }
  return count;
}

describe('DeltaBase (version 2 page deltas)', () => {
  test.prop([baseAndWrites, fc.array(fc.nat(), { maxLength: 4 })], { numRuns: 150 })(
    'a delta made with a dirty set covering every write is byte-identical to the full-scan delta, and rebuilds the state',
    ({ base, x, writes, pageSize }, extra) => {
      const db = new DeltaBase(base, { layoutHash: LAYOUT, pageSize });
      const tracker = new PageTracker(x.length, pageSize);
      tracker.mark(0, x.length); // writes before the checkpoint do not count
      const mark = tracker.checkpoint();
      for (const [o, len] of writes) tracker.mark(o, len);
      for (const e of extra) tracker.markPage(e % (Math.ceil(x.length / pageSize) + 1)); // spurious marks are harmless
      const full = db.pageDelta(x);
      const dirty = db.pageDelta(x, { dirty: tracker.since(mark) });
      expect(dirty).toEqual(full);
      const info = describeDelta(full);
      expect(info.version).toBe(DELTA_VERSION_PAGED);
      expect(info.pageCount).toBe(changedPages(base, x, pageSize));
      expect(info.baseHash).toBe(pagedHash64(base, pageSize));
      expect(info.targetHash).toBe(pagedHash64(x, pageSize));
      expect(applyDelta(base, dirty, { layoutHash: LAYOUT, maxTargetBytes: x.length })).toEqual(Uint8Array.from(x));
      expect(applyDelta(base, dirty, { maxTargetBytes: x.length, basePagedHash: db.hash })).toEqual(Uint8Array.from(x));
    },
  );

  test.prop([baseAndWrites], { numRuns: 100 })(
    'sends the same pages as the version 1 pageDelta, with paged hashes instead of hash64',
    ({ base, x, pageSize }) => {
      const v1 = pageDelta(base, x, { layoutHash: LAYOUT, pageSize });
      const v2 = new DeltaBase(base, { layoutHash: LAYOUT, pageSize }).pageDelta(x);
      const a = describeDelta(v1);
      const b = describeDelta(v2);
      expect({ ...b, version: 1, baseHash: 0n, targetHash: 0n }).toEqual({ ...a, baseHash: 0n, targetHash: 0n });
      expect(v2.subarray(48)).toEqual(v1.subarray(48)); // the same zlib stream
      expect(a.targetHash).toBe(hash64(x));
    },
  );

  it('a dirty set that misses a change makes a delta that does not rebuild the state (why it must cover every write)', () => {
    const base = new Uint8Array(16 * 1024).fill(3);
    const x = base.slice();
    x[100] = 9; // page 0, marked
    x[9000] = 9; // page 2, not marked
    const db = new DeltaBase(base, { layoutHash: LAYOUT });
    const tracker = new PageTracker(x.length);
    const mark = tracker.checkpoint();
    tracker.mark(100);
    const d = db.pageDelta(x, { dirty: tracker.since(mark) });
    expect(d).not.toEqual(db.pageDelta(x));
    expect(describeDelta(d).pageCount).toBe(1);
    expect(applyDelta(base, d)[9000]).toBe(3);
  });

  it('a version 2 header on an XOR delta is corrupt, and version 3 is not read', () => {
    const d = new DeltaBase(new Uint8Array(300), { layoutHash: LAYOUT, pageSize: 256 }).pageDelta(
      new Uint8Array(300).fill(1),
    );
    const xorKind = d.slice();
    xorKind[5] = 1;
    xorKind[6] = 0;
    expect(() => describeDelta(xorKind)).toThrow(expect.objectContaining({ code: 'corrupt' }));
    const v3 = d.slice();
    v3[4] = 3;
    expect(() => describeDelta(v3)).toThrow(/version 3/);
  });

  it('refuses a dirty set of another page size', () => {
    const db = new DeltaBase(new Uint8Array(8192), { layoutHash: LAYOUT });
    const dirty = new PageTracker(8192, 1024).since(0);
    expect(() => db.pageDelta(new Uint8Array(8192), { dirty })).toThrow(DeltaError);
  });

  it('a damaged base or target is caught by the paged hashes', () => {
    const base = new Uint8Array(5000).map((_, i) => i);
    const x = base.slice();
    x[4999] = 0;
    const d = new DeltaBase(base, { layoutHash: LAYOUT, pageSize: 256 }).pageDelta(x);
    const other = base.slice();
    other[10]! ^= 1;
    expect(() => applyDelta(other, d)).toThrow(expect.objectContaining({ code: 'wrong-base' }));
    const forged = d.slice();
    forged[30]! ^= 1; // target hash
    expect(() => applyDelta(base, forged)).toThrow(expect.objectContaining({ code: 'corrupt' }));
  });
});

describe('PageTracker', () => {
  it('stamps pages with generations so several bases can be tracked at once', () => {
    const t = new PageTracker(10 * 256, 256);
    expect(t.pages).toBe(10);
    const a = t.checkpoint();
    t.mark(300, 300); // pages 1 and 2
    const b = t.checkpoint();
    t.mark(2559); // page 9
    t.mark(-5, 10); // page 0 (clipped)
    t.mark(5000, 10); // past the end: ignored
    const pagesOf = (c: number) => [...Array(t.pages).keys()].filter((p) => t.markedSince(c, p));
    expect(pagesOf(a)).toEqual([0, 1, 2, 9]);
    expect(pagesOf(b)).toEqual([0, 9]);
    expect(t.countSince(b)).toBe(2);
    expect(t.since(b).mayDiffer(10)).toBe(true); // past the state: always
    t.markAll();
    expect(t.countSince(t.checkpoint() - 1)).toBe(10);
  });

  it('rejects bad page sizes', () => {
    expect(() => new PageTracker(100, 100)).toThrow(DeltaError);
    expect(() => new PageTracker(-1)).toThrow(DeltaError);
  });
});

describe('TestCore page tracking (a Core hook)', () => {
  test.prop(
    [
      fc.array(fc.uint8Array({ minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 60 }),
      fc.integer({ min: 0, max: 30 }),
      fc.constantFrom(256, 1024),
    ],
    { numRuns: 60 },
  )(
    'the delta from the pages the core marked since the base equals the full-scan delta',
    (inputs, warmup, pageSize) => {
      const core = new TestCore({ players: 2, ramBytes: 8192, trackPages: pageSize });
      const tracker = core.pageTracker!;
      const zero = new Uint8Array(2);
      for (let f = 0; f < warmup; f++) {
        core.setInput(0, zero);
        core.advance();
      }
      const base = new Uint8Array(core.stateBytes);
      core.saveInto(base);
      const mark = tracker.checkpoint();
      for (const [f, input] of inputs.entries()) {
        core.setInput(f % 2, input);
        core.advance();
      }
      const current = new Uint8Array(core.stateBytes);
      core.saveInto(current);
      const db = new DeltaBase(base, { layoutHash: core.registry.layoutHash, pageSize });
      const d = db.pageDelta(current, { dirty: tracker.since(mark) });
      expect(d).toEqual(db.pageDelta(current));
      expect(tracker.countSince(mark)).toBeLessThan(tracker.pages + 1);
      const rebuilt = applyDelta(base, d, { layoutHash: core.registry.layoutHash });
      const other = new TestCore({ players: 2, ramBytes: 8192 });
      other.load(rebuilt);
      expect(other.checksum()).toBe(core.checksum());
    },
  );

  it('load and reset mark every page', () => {
    const core = new TestCore({ ramBytes: 4096, trackPages: 256 });
    const t = core.pageTracker!;
    const s = new Uint8Array(core.stateBytes);
    core.saveInto(s);
    let mark = t.checkpoint();
    core.load(s);
    expect(t.countSince(mark)).toBe(t.pages);
    mark = t.checkpoint();
    core.reset();
    expect(t.countSince(mark)).toBe(t.pages);
    expect(new TestCore().pageTracker).toBeUndefined();
  });

  it('StateRegistry.snapshotOffset names where an entry starts, and refuses unknown entries', () => {
    const core = new TestCore({ ramBytes: 64 });
    const s = new Uint8Array(core.stateBytes);
    core.saveInto(s);
    const o = core.registry.snapshotOffset('core', 0, 'frame');
    core.advance();
    const s2 = new Uint8Array(core.stateBytes);
    core.saveInto(s2);
    expect(new DataView(s2.buffer).getUint32(o, true)).toBe(1);
    expect(() => core.registry.snapshotOffset('core', 0, 'nope')).toThrow(
      expect.objectContaining({ code: 'bad-argument' }),
    );
  });
});
