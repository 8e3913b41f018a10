// SyncTest on Nestopia/efp: every frame rolled back 8 frames and resimulated, checksums compared.
import { CoreDriver, RollbackError, SyncTestSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import { describe, expect, it } from 'vitest';
import { encodeRetroPad, RetroPad } from '../../src/index.js';
import { loadNestopia, scriptedMask } from './fixtures.js';

function syncTest(core: Core, frames: number, seed: number, extraButtons = 0): SyncTestSession {
  const session = new SyncTestSession({ players: 2, inputBytes: 2, checkDistance: 8 });
  const driver = new CoreDriver(core, session.ringFrames);
  const input = new Uint8Array(2);
  for (let i = 0; i < frames; i++) {
    const f = session.currentFrame;
    for (let p = 0; p < 2; p++)
      session.addLocalInput(p, encodeRetroPad(scriptedMask(seed, f, p) | (f % 12 < 6 ? extraButtons : 0), input));
    driver.run(session.advanceFrame(), session);
  }
  return session;
}

describe('SyncTest on Nestopia/efp, check distance 8', () => {
  it('600 frames, every frame resimulated 8 frames back: no desync', () => {
    const core = loadNestopia();
    try {
      const s = syncTest(core, 600, 11);
      expect(s.stats.rollbacks).toBeGreaterThanOrEqual(590);
      expect(s.stats.resimulatedFrames).toBeGreaterThanOrEqual(590 * 8);
      expect(core.frame).toBe(600);
    } finally {
      core.close();
    }
  });

  it("finds Nestopia's own non-determinism: turbo A/B (RetroPad X/Y) keep their pulse outside the savestate", () => {
    const core = loadNestopia();
    try {
      expect(() => syncTest(core, 600, 11, RetroPad.X | RetroPad.Y)).toThrow(
        expect.objectContaining({ code: 'desync' }),
      );
    } finally {
      core.close();
    }
  });

  it('catches a core that is not deterministic (break on purpose: a stray button every 37th advance)', () => {
    const core = loadNestopia();
    let advances = 0;
    const flaky: Core = {
      get frame() {
        return core.frame;
      },
      ports: core.ports,
      inputBytes: core.inputBytes,
      stateBytes: core.stateBytes,
      setInput: (p, i) => core.setInput(p, i),
      advance() {
        if (++advances % 37 === 0) core.setInputMask(0, 0x01ff);
        core.advance();
      },
      saveInto: (t) => core.saveInto(t),
      load: (s) => core.load(s),
      checksum: () => core.checksum(),
      reset: () => core.reset(),
    };
    try {
      expect(() => syncTest(flaky, 600, 11)).toThrow(RollbackError);
    } finally {
      core.close();
    }
  });
});
