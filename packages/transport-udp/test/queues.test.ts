import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { Deque } from '../src/deque.js';
import { MessagePool } from '../src/out-message.js';

type Op = { kind: 'push'; value: number } | { kind: 'shift' } | { kind: 'clear' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.integer().map((value) => ({ kind: 'push' as const, value })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'shift' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

describe('Deque', () => {
  test.prop([fc.integer({ min: 1, max: 8 }), fc.array(opArb, { maxLength: 300 })], { numRuns: 200 })(
    'behaves as an array used as a FIFO (push, shift, peek, at, length, clear)',
    (capacity, ops) => {
      const d = new Deque<number>(capacity);
      const model: number[] = [];
      for (const op of ops) {
        if (op.kind === 'push') {
          d.push(op.value);
          model.push(op.value);
        } else if (op.kind === 'shift') {
          expect(d.shift()).toBe(model.shift());
        } else {
          d.clear();
          model.length = 0;
        }
        expect(d.length).toBe(model.length);
        expect(d.peek()).toBe(model[0]);
        for (let i = 0; i < model.length; i++) expect(d.at(i)).toBe(model[i]);
      }
    },
  );
});

describe('MessagePool', () => {
  test.prop(
    [
      fc.array(
        fc.record({
          bytes: fc.uint8Array({ maxLength: 5000 }),
          frags: fc.integer({ min: 1, max: 100 }),
          keep: fc.boolean(),
        }),
        { maxLength: 60 },
      ),
    ],
    { numRuns: 100 },
  )('every entry holds its own copy, fresh state, whatever entries were released before', (steps) => {
    const pool = new MessagePool(8, 8 << 10);
    const live: Array<{ m: ReturnType<MessagePool['take']>; bytes: Uint8Array; frags: number }> = [];
    for (const [i, { bytes, frags, keep }] of steps.entries()) {
      const source = bytes.slice();
      const m = pool.take(i % 3, i, source, frags);
      source.fill(0xee); // the caller may reuse its buffer at once
      // Dirty the entry as a sender would, so reuse must reset it.
      m.fragState.fill(2, 0, frags);
      m.ackedCount = frags;
      m.nextFrag = frags;
      live.push({ m, bytes, frags });
      if (!keep) pool.release(live.shift()!.m);
      for (const l of live) {
        expect(Array.from(l.m.data.subarray(0, l.m.length))).toEqual(Array.from(l.bytes));
        expect(l.m.length).toBe(l.bytes.length);
        expect(l.m.fragCount).toBe(l.frags);
      }
      // A fresh entry starts clean.
      const probe = pool.take(0, 0, bytes, frags);
      expect(Array.from(probe.fragState.subarray(0, frags)).every((s) => s === 0)).toBe(true);
      expect(probe.ackedCount).toBe(0);
      expect(probe.nextFrag).toBe(0);
      const out = new Uint8Array(bytes.length + 4);
      probe.copyTo(0, bytes.length, out, 4);
      expect(Array.from(out.subarray(4))).toEqual(Array.from(bytes));
      if (bytes.length > 10) {
        probe.copyTo(3, bytes.length - 5, out, 0);
        expect(Array.from(out.subarray(0, bytes.length - 5))).toEqual(Array.from(bytes.subarray(3, bytes.length - 2)));
      }
      pool.release(probe);
    }
  });
});
