import { fc, test } from '@fast-check/vitest';
import { DeltaError } from '@netplay/state';
import { deflate } from 'pako';
import { describe, expect, it } from 'vitest';
import { inflateSavestate, RetroArchError } from '../src/index.js';

/** Runs `f` and returns what it threw (fails the test when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

function expectSavestateError(f: () => unknown): void {
  const e = thrown(f);
  // retroarch's own typed error, never state's DeltaError leaking through
  expect(e).toBeInstanceOf(RetroArchError);
  expect(e).not.toBeInstanceOf(DeltaError);
  expect((e as RetroArchError).code).toBe('savestate');
}

// 8 MiB of zeros deflate to about 8 KiB: a zip bomb for a savestate announced as far smaller.
const BOMB_BYTES = 8 << 20;
const bomb = deflate(new Uint8Array(BOMB_BYTES), { level: 9 });

describe('inflateSavestate on hostile zlib data', () => {
  it('the bomb is what it claims: a few KiB that inflate to 8 MiB', () => {
    expect(bomb.length).toBeLessThan(64 << 10);
    expect(inflateSavestate(bomb, BOMB_BYTES, true, BOMB_BYTES)).toHaveLength(BOMB_BYTES);
  });

  test.prop([fc.integer({ min: 0, max: 1 << 20 })], { numRuns: 20 })(
    'a zip bomb announced as smaller than it inflates fails with savestate',
    (announced) => {
      expectSavestateError(() => inflateSavestate(bomb, announced, true, 1 << 20));
    },
  );

  it('a zip bomb announced over the maximum fails with savestate before inflating', () => {
    expectSavestateError(() => inflateSavestate(bomb, BOMB_BYTES, true, BOMB_BYTES - 1));
  });

  test.prop([fc.uint8Array({ minLength: 1, maxLength: 4000 }), fc.double({ min: 0, max: 1, maxExcluded: true })], {
    numRuns: 100,
  })('a truncated stream fails with savestate', (state, at) => {
    const full = deflate(state);
    const cut = Math.floor(at * full.length);
    expectSavestateError(() => inflateSavestate(full.subarray(0, cut), state.length, true, 1 << 20));
  });

  test.prop([fc.uint8Array({ maxLength: 4000 }), fc.uint8Array({ minLength: 1, maxLength: 8 })], { numRuns: 50 })(
    'bytes after the stream fail with savestate',
    (state, extra) => {
      const full = deflate(state);
      const data = new Uint8Array(full.length + extra.length);
      data.set(full);
      data.set(extra, full.length);
      expectSavestateError(() => inflateSavestate(data, state.length, true, 1 << 20));
    },
  );

  test.prop([fc.uint8Array({ minLength: 1, maxLength: 4000 }), fc.integer({ min: 1, max: 100 })], { numRuns: 50 })(
    'a stream that inflates to fewer bytes than announced fails with savestate',
    (state, more) => {
      expectSavestateError(() => inflateSavestate(deflate(state), state.length + more, true, 1 << 20));
    },
  );

  test.prop([fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 4096 })], { numRuns: 200 })(
    'any bytes either inflate to exactly the announced size or fail with savestate',
    (bytes, announced) => {
      let out: Uint8Array | undefined;
      try {
        out = inflateSavestate(bytes, announced, true, 4096);
      } catch (e) {
        expect(e).toBeInstanceOf(RetroArchError);
        expect((e as RetroArchError).code).toBe('savestate');
        return;
      }
      expect(out).toHaveLength(announced);
    },
  );

  test.prop([fc.uint8Array({ maxLength: 4000 }), fc.integer({ min: 0, max: 9 })], { numRuns: 50 })(
    'a well-formed stream of the announced size inflates to the original bytes',
    (state, level) => {
      const out = inflateSavestate(deflate(state, { level }), state.length, true, 1 << 20);
      expect(out).toEqual(state);
    },
  );
});
