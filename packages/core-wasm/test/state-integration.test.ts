import { fc, test } from '@fast-check/vitest';
import { applyDelta, pageDelta, SnapshotRing, xorDelta } from '@netplay/state';
import { describe, expect } from 'vitest';
import { Chip8Core } from '../src/index.js';
import { archiveRom } from './fixtures.js';

const rom = archiveRom('tank'); // uses Cxnn: the generator's state must travel with the savestate
const keys = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 2, maxLength: 50 });

function stepWith(core: Chip8Core, key: number): void {
  core.setInputValue(0, key);
  core.setInputValue(1, key >> 8);
  core.advance();
}

describe('WasmCore states with the rest of @netplay/state', () => {
  test.prop([keys, fc.nat()], { numRuns: 20 })(
    'xor and page deltas between two savestates rebuild the later one',
    (seq, at) => {
      const core = Chip8Core.createSync(rom);
      const k = 1 + (at % (seq.length - 1));
      for (const key of seq.slice(0, k)) stepWith(core, key);
      const base = core.save();
      for (const key of seq.slice(k)) stepWith(core, key);
      const current = core.save();
      const layoutHash = core.registry.layoutHash;
      for (const delta of [xorDelta(base, current, { layoutHash }), pageDelta(base, current, { layoutHash })]) {
        const rebuilt = applyDelta(base, delta, { layoutHash });
        expect(rebuilt).toEqual(current);
        const fresh = Chip8Core.createSync(rom);
        fresh.load(rebuilt);
        expect(fresh.checksum()).toBe(core.checksum());
        expect(fresh.frame).toBe(seq.length);
      }
    },
  );

  test.prop([keys, fc.integer({ min: 1, max: 8 })], { numRuns: 20 })(
    'rollback with a SnapshotRing: load an old frame, replay the inputs, same checksum',
    (seq, depth) => {
      const core = Chip8Core.createSync(rom);
      const ring = new SnapshotRing(8, core.stateBytes);
      const sums: bigint[] = [];
      for (const key of seq) {
        ring.save(core.frame, (t) => core.saveInto(t));
        stepWith(core, key);
        sums.push(core.checksum());
      }
      const back = Math.max(0, seq.length - depth);
      expect(ring.load(back, (s) => core.load(s))).toBe(true);
      expect(core.frame).toBe(back);
      for (const key of seq.slice(back)) stepWith(core, key);
      expect(core.checksum()).toBe(sums[sums.length - 1]);
    },
  );
});
