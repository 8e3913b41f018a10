// Our own GB and GBA test ROMs on Gambatte and mGBA under rollback: save/load mid-run replays the
// same frames, a state moves to another instance, SyncTest with check distance 8 finds no desync
// (the ROMs read back their save RAM every frame, so a save RAM outside the state would desync),
// and the ROMs' battery save RAM is the core's exposed NVRAM — on mGBA, after a load, only once
// the game has not written its save RAM for 16 frames (the quiet GBA ROM shows when).
import { CoreDriver, SyncTestSession } from '@netplay/rollback';
import { describe, expect, it } from 'vitest';
import { GBA_QUIET_TEST_ROM, QUIET_AFTER_FRAME } from '../../scripts/build-test-roms.js';
import { encodeRetroPad, type LibretroCore } from '../../src/index.js';
import {
  gambatteField,
  loadRomTarget,
  ROM_TARGETS,
  type RomTarget,
  romMask,
  romMix,
  romRun,
  romTarget,
} from './test-roms.js';

function step(core: LibretroCore, seed: number): void {
  core.setInputMask(0, romMask(seed, core.frame));
  core.advance();
}

function syncTest(core: LibretroCore, frames: number, seed: number): SyncTestSession {
  const session = new SyncTestSession({ players: 1, inputBytes: 2, checkDistance: 8 });
  const driver = new CoreDriver(core, session.ringFrames);
  const input = new Uint8Array(2);
  for (let i = 0; i < frames; i++) {
    session.addLocalInput(0, encodeRetroPad(romMask(seed, session.currentFrame), input));
    driver.run(session.advanceFrame(), session);
  }
  return session;
}

/** Gambatte's instances share a start (wall clock in its state); mGBA's start on their own. */
function loadPair(target: RomTarget): [LibretroCore, LibretroCore] {
  const a = loadRomTarget(target);
  return [a, loadRomTarget(target, target.wallClockInState ? { startState: a.powerOnState() } : {})];
}

describe.each(ROM_TARGETS)('$name under rollback', (target) => {
  it('save mid-run (frame 1,500), run 300 frames, load, rerun: the same checksum every frame', () => {
    const core = loadRomTarget(target);
    try {
      romRun(core, 3, 1500);
      const saved = core.save();
      const atSave = core.checksum();
      const first: bigint[] = [];
      for (let f = 0; f < 300; f++) {
        step(core, 3);
        first.push(core.checksum());
      }
      core.load(saved);
      expect(core.frame).toBe(1500);
      expect(core.checksum()).toBe(atSave);
      for (let f = 0; f < 300; f++) {
        step(core, 3);
        expect(core.checksum()).toBe(first[f]);
      }
      expect(core.frame).toBe(1800);
    } finally {
      core.close();
    }
  });

  it('a state loaded into another instance continues identically', () => {
    const [a, b] = loadPair(target);
    try {
      romRun(a, 5, 900);
      b.load(a.save());
      expect(b.checksum()).toBe(a.checksum());
      for (let f = 0; f < 120; f++) {
        step(a, 5);
        step(b, 5);
        expect(b.checksum()).toBe(a.checksum());
      }
      expect(b.rawCrc32()).toBe(a.rawCrc32());
      if (target.saveRamFollowsLoads) expect(romMix(b)).toEqual(romMix(a));
    } finally {
      a.close();
      b.close();
    }
  });

  it('SyncTest, check distance 8, 600 frames: every frame resimulated 8 frames back, no desync', () => {
    const core = loadRomTarget(target);
    try {
      const s = syncTest(core, 600, 11);
      expect(s.stats.rollbacks).toBeGreaterThanOrEqual(590);
      expect(s.stats.resimulatedFrames).toBeGreaterThanOrEqual(590 * 8);
      expect(core.frame).toBe(600);
      if (target.saveRamFollowsLoads) expect(romMix(core).romFrame).toBe(599 & 0xff);
    } finally {
      core.close();
    }
  });

  it("the ROM's battery save RAM is the NVRAM: the boot counter it keeps there carries over through options.nvram", () => {
    const first = loadRomTarget(target);
    let sram: Uint8Array;
    try {
      expect(first.nvram().length).toBeGreaterThanOrEqual(4);
      const fresh = first.nvram()[3]!;
      romRun(first, 1, 10);
      expect(romMix(first)).toMatchObject({ romFrame: 9, boots: (fresh + 1) & 0xff });
      sram = first.nvram().slice();
    } finally {
      first.close();
    }
    const second = loadRomTarget(target, { nvram: sram });
    try {
      romRun(second, 1, 10);
      expect(romMix(second).boots).toBe((sram[3]! + 1) & 0xff); // one more boot than `first`
      expect(romMix(second).romFrame).toBe(9);
    } finally {
      second.close();
    }
  });
});

describe('save RAM after a state load', () => {
  it('Gambatte: nvram() follows the game through loads (its state holds the SRAM, loaded back in place)', () => {
    const core = loadRomTarget(ROM_TARGETS.find((t) => t.name === 'gambatte-gb')!);
    try {
      romRun(core, 4, 100);
      const saved = core.save();
      const at100 = romMix(core);
      romRun(core, 4, 50);
      const at150 = romMix(core);
      expect(at150).not.toEqual(at100);
      core.load(saved);
      expect(romMix(core)).toEqual(at100);
      romRun(core, 4, 50);
      expect(romMix(core)).toEqual(at150);
    } finally {
      core.close();
    }
  });

  it.each(['mgba-gba', 'mgba-gb'] as const)(
    "%s: the game's SRAM rolls back with the state, but nvram() keeps the bytes from before the first load",
    (name) => {
      const core = loadRomTarget(ROM_TARGETS.find((t) => t.name === name)!);
      try {
        romRun(core, 4, 100);
        const saved = core.save();
        romRun(core, 4, 50);
        const at150 = romMix(core);
        const sum150 = core.checksum();
        core.load(saved);
        expect(romMix(core)).toEqual(at150); // not put back: the exposed buffer is not the state's
        romRun(core, 4, 50);
        // The game read its SRAM back every frame and agrees with the first pass: its SRAM did roll back.
        expect(core.checksum()).toBe(sum150);
        romRun(core, 4, 50);
        expect(romMix(core)).toEqual(at150); // and the game's writes no longer reach nvram()
      } finally {
        core.close();
      }
    },
  );
});

describe('mGBA: the masked save RAM reaches nvram() once the game leaves it alone', () => {
  // mGBA 0.10.1's retro_unserialize loads with SAVESTATE_RTC only, so the state's save data goes to
  // a private copy (a mask, with write-back) and the buffer RETRO_MEMORY_SAVE_RAM exposes keeps its
  // bytes; at the end of the first frame more than 15 frames after the game's last save-RAM write
  // (mSAVEDATA_CLEANUP_THRESHOLD), the copy is written back and the mask removed. Our main ROMs
  // write every frame and never get there; the quiet one stops after frame QUIET_AFTER_FRAME.
  it(`mgba-gba, quiet ROM (no SRAM store after its frame ${QUIET_AFTER_FRAME}): stale for 15 frames after the last write, then the game's bytes`, () => {
    const target: RomTarget = { ...romTarget('mgba-gba'), rom: GBA_QUIET_TEST_ROM };
    const core = loadRomTarget(target);
    const unloaded = loadRomTarget(target); // never loads a state: nvram() is live all along
    try {
      romRun(core, 4, 100);
      const saved = core.save();
      romRun(core, 4, 50);
      const at150 = romMix(core);
      core.load(saved);
      // The game's last store is in run QUIET_AFTER_FRAME + 1 (its frame counter starts at 0).
      const lastWrite = QUIET_AFTER_FRAME + 1;
      romRun(core, 4, lastWrite + 15 - core.frame);
      expect(romMix(core), `15 frames after the last write (frame ${core.frame})`).toEqual(at150);
      romRun(core, 4, 1);
      romRun(unloaded, 4, core.frame);
      expect(romMix(unloaded).romFrame).toBe(QUIET_AFTER_FRAME & 0xff);
      expect(romMix(core), `16 frames after the last write (frame ${core.frame})`).toEqual(romMix(unloaded));
      expect(core.checksum()).toBe(unloaded.checksum());
      // Unmasked: the exposed buffer is the game's save RAM again (and stays so until the next load).
      romRun(core, 4, 30);
      romRun(unloaded, 4, 30);
      expect(romMix(core)).toEqual(romMix(unloaded));
    } finally {
      core.close();
      unloaded.close();
    }
  });
});

describe('save RAM with a shared start (startState loads a state before the first frame)', () => {
  it.each(ROM_TARGETS)('$name', (target) => {
    const a = loadRomTarget(target);
    const b = loadRomTarget(target, { startState: a.powerOnState() });
    try {
      const fresh = romMix(b);
      romRun(b, 1, 10);
      // Gambatte: the game's writes show (frame counter 9); mGBA: masked from the start.
      if (target.saveRamFollowsLoads) expect(romMix(b).romFrame).toBe(9);
      else expect(romMix(b)).toEqual(fresh);
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('fact (c) with our ROMs: a fresh serialize right after a load', () => {
  /** Save/load at 100 points 30 frames apart; returns, per point, the offsets where a fresh serialize differs. */
  function reserializeDiffs(core: LibretroCore): number[][] {
    const out: number[][] = [];
    for (let k = 0; k < 100; k++) {
      romRun(core, 3, 30);
      const saved = core.save();
      const sum = core.checksum();
      core.load(saved);
      expect(core.checksum()).toBe(sum); // the checksum rule: the bytes loaded, never a re-serialize
      const loaded = saved.subarray(24);
      const again = core.serializeFresh();
      expect(again.length).toBe(loaded.length);
      const d: number[] = [];
      for (let i = 0; i < again.length; i++) if (again[i] !== loaded[i]) d.push(i);
      out.push(d);
    }
    return out;
  }

  it('Gambatte: differs at some points, only in its one-byte field endx', () => {
    const core = loadRomTarget(ROM_TARGETS.find((t) => t.name === 'gambatte-gb')!);
    try {
      const diffs = reserializeDiffs(core);
      const raw = core.serializeFresh();
      const endx = gambatteField(raw, 'endx');
      expect(endx.size).toBe(1);
      expect(diffs.filter((d) => d.length > 0).length).toBeGreaterThan(0);
      for (const d of diffs) for (const i of d) expect(i).toBe(endx.offset);
    } finally {
      core.close();
    }
  });

  it.each(['mgba-gba', 'mgba-gb'] as const)('%s: byte-identical at all 100 points', (name) => {
    const core = loadRomTarget(ROM_TARGETS.find((t) => t.name === name)!);
    try {
      expect(reserializeDiffs(core).filter((d) => d.length > 0)).toEqual([]);
    } finally {
      core.close();
    }
  });
});
