// Fact (c) of issue 14 on a real core: Gambatte's retro_serialize right after retro_unserialize
// differs from the bytes loaded. The checksum rule (hash the state as last serialized after an
// advance, or the bytes loaded) keeps such a core from reporting false desyncs.
import { describe, expect, it } from 'vitest';
import { loadGambatte } from './fixtures.js';

function run(core: ReturnType<typeof loadGambatte>, frames: number): void {
  for (let i = 0; i < frames; i++) {
    core.setInputMask(0, (core.frame * 37) & 0xf1);
    core.advance();
  }
}

describe('checksum rule on Gambatte', () => {
  it('a fresh serialize right after a load differs from the state loaded; checksum() does not', () => {
    const a = loadGambatte();
    const b = loadGambatte({ startState: a.powerOnState() });
    try {
      run(a, 100);
      const state = a.save();
      const raw = a.serializeFresh();
      b.load(state);
      expect(b.checksum()).toBe(a.checksum());
      expect(b.rawCrc32()).toBe(a.rawCrc32());
      const refreshed = b.serializeFresh();
      expect(refreshed.length).toBe(raw.length);
      const differing = raw.filter((byte, i) => refreshed[i] !== byte).length;
      expect(differing).toBeGreaterThan(0); // the fact the rule is immune to
      // (With efp.nes as its ROM, Gambatte does not even resimulate the frame after a load
      // identically: see the README's findings. So this file proves the rule, not Gambatte.)
    } finally {
      a.close();
      b.close();
    }
  });

  it('two Gambatte instances from one shared start agree frame by frame (fact b: rtcbase)', () => {
    const a = loadGambatte();
    const b = loadGambatte({ startState: a.powerOnState() });
    try {
      for (let i = 0; i < 300; i++) {
        run(a, 1);
        run(b, 1);
        expect(b.checksum()).toBe(a.checksum());
      }
    } finally {
      a.close();
      b.close();
    }
  });
});
