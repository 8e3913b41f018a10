import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { SessionError } from '../src/index.js';
import { packSyncState, unpackSyncState } from '../src/sync-state.js';

describe("SYNC's packed savestate", () => {
  test.prop([fc.uint8Array({ maxLength: 20_000 }), fc.integer({ min: 0, max: 3 })], { numRuns: 50 })(
    'round-trips any state, of any size up to the core limit',
    (state, extra) => {
      expect(unpackSyncState(packSyncState(state), state.length + extra)).toEqual(state);
    },
  );

  it('a mostly-zero state of 64 KiB packs to a few hundred bytes', () => {
    const state = new Uint8Array(65_536);
    state.set([1, 2, 3], 100);
    state.set([9], 40_000);
    expect(packSyncState(state).length).toBeLessThan(400);
  });

  it('refuses a state over the core size before allocating, and bytes that are not a packed state', () => {
    const packed = packSyncState(new Uint8Array(5000).fill(7));
    expect(() => unpackSyncState(packed, 4999)).toThrow(SessionError);
    expect(() => unpackSyncState(packed, 4999)).toThrow(/5000 bytes, this core at most 4999/);
    expect(() => unpackSyncState(new Uint8Array(40).fill(3), 1 << 20)).toThrow(/does not unpack/);
  });
});
