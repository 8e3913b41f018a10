import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { SnapshotRing, StateError } from '../src/index.js';

/** The model: a map from frame to bytes holding at most `capacity` frames; a new frame evicts the smallest. */
interface Model {
  capacity: number;
  frames: Map<number, Uint8Array>;
}
type Real = SnapshotRing;

function check(m: Model, r: Real): void {
  expect(r.size).toBe(m.frames.size);
  expect(r.frames()).toEqual([...m.frames.keys()].sort((a, b) => a - b));
  const keys = [...m.frames.keys()];
  expect(r.oldestFrame).toBe(keys.length ? Math.min(...keys) : undefined);
  expect(r.newestFrame).toBe(keys.length ? Math.max(...keys) : undefined);
}

class SaveCommand implements fc.Command<Model, Real> {
  constructor(
    readonly frame: number,
    readonly data: Uint8Array,
  ) {}
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    if (!m.frames.has(this.frame) && m.frames.size === m.capacity) {
      m.frames.delete(Math.min(...m.frames.keys()));
    }
    m.frames.set(this.frame, this.data.slice());
    const stored = r.save(this.frame, (target) => {
      target.set(this.data);
      return this.data.length;
    });
    expect(stored).toEqual(this.data);
    check(m, r);
  }
  toString(): string {
    return `save(${this.frame}, ${this.data.length}B)`;
  }
}

class LoadCommand implements fc.Command<Model, Real> {
  constructor(readonly frame: number) {}
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    let got: Uint8Array | undefined;
    const ok = r.load(this.frame, (s) => {
      got = s.slice();
    });
    expect(ok).toBe(m.frames.has(this.frame));
    expect(got).toEqual(m.frames.get(this.frame));
    expect(r.has(this.frame)).toBe(m.frames.has(this.frame));
    check(m, r);
  }
  toString(): string {
    return `load(${this.frame})`;
  }
}

class DropCommand implements fc.Command<Model, Real> {
  constructor(
    readonly frame: number,
    readonly after: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    let expected = 0;
    for (const f of [...m.frames.keys()]) {
      if (this.after ? f > this.frame : f < this.frame) {
        m.frames.delete(f);
        expected++;
      }
    }
    expect(this.after ? r.dropAfter(this.frame) : r.dropBefore(this.frame)).toBe(expected);
    check(m, r);
  }
  toString(): string {
    return `${this.after ? 'dropAfter' : 'dropBefore'}(${this.frame})`;
  }
}

const SLOT = 24;
const frameArb = fc.integer({ min: 0, max: 30 });
const commands = fc.commands(
  [
    fc.tuple(frameArb, fc.uint8Array({ minLength: 0, maxLength: SLOT })).map(([f, d]) => new SaveCommand(f, d)),
    frameArb.map((f) => new LoadCommand(f)),
    fc.tuple(frameArb, fc.boolean()).map(([f, a]) => new DropCommand(f, a)),
  ],
  { maxCommands: 60 },
);

describe('SnapshotRing', () => {
  test.prop([fc.integer({ min: 1, max: 6 }), commands], { numRuns: 300 })(
    'behaves like a bounded map that evicts the oldest frame',
    (capacity, cmds) => {
      fc.modelRun(() => ({ model: { capacity, frames: new Map() }, real: new SnapshotRing(capacity, SLOT) }), cmds);
    },
  );

  it('a saver that throws or overflows leaves the slot empty', () => {
    const r = new SnapshotRing(2, 4);
    r.save(1, (t) => {
      t[0] = 1;
      return 1;
    });
    expect(() =>
      r.save(1, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(r.has(1)).toBe(false);
    const err = (() => {
      try {
        r.save(2, () => 5);
      } catch (e) {
        return e;
      }
    })() as StateError;
    expect(err).toBeInstanceOf(StateError);
    expect(err.code).toBe('bad-argument');
    expect(r.size).toBe(0);
  });

  it('returns the same view for the same slot and size (no allocation per frame)', () => {
    const r = new SnapshotRing(3, 16);
    const saver = (t: Uint8Array) => {
      t.fill(7, 0, 10);
      return 10;
    };
    const views = new Set<Uint8Array>();
    for (let f = 0; f < 30; f++) views.add(r.save(f, saver));
    expect(views.size).toBe(3);
  });

  it('rejects bad sizes and frames', () => {
    expect(() => new SnapshotRing(0, 8)).toThrow(StateError);
    expect(() => new SnapshotRing(2, -1)).toThrow(StateError);
    expect(() => new SnapshotRing(2, 8).save(1.5, () => 0)).toThrow(StateError);
  });
});
