// Nestopia/efp: 3,000 frames of scripted input in two separate processes give the same checksum
// at every 60th frame; a save/load mid-run replays the same frames.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EFP, loadNestopia, NESTOPIA, requireFile, scriptedMask, scriptedRun } from './fixtures.js';

const script = fileURLToPath(new URL('./run-scripted.ts', import.meta.url));

function runInChild(frames: number, seed: number): string[] {
  const out = execFileSync(
    process.execPath,
    ['--conditions=@netplay/source', '--import', 'tsx', script, String(frames), String(seed)],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return out.trim().split('\n');
}

describe('Nestopia/efp determinism', () => {
  it('two processes, 3,000 frames of scripted input: equal checksums at every 60th frame', () => {
    requireFile(NESTOPIA);
    requireFile(EFP);
    const a = runInChild(3000, 7);
    const b = runInChild(3000, 7);
    expect(a).toHaveLength(50);
    expect(b).toEqual(a);
    // The game reacts to the input: the state changes along the run, and other input gives other states.
    expect(new Set(a.map((l) => l.split(':')[1])).size).toBeGreaterThan(40);
    const other = runInChild(600, 8);
    expect(other).not.toEqual(a.slice(0, 10));
  });

  it('save mid-run, run on, load, rerun: the same checksum every frame, frame counter restored', () => {
    const core = loadNestopia();
    try {
      scriptedRun(core, 3, 1500);
      const saved = core.save();
      const atSave = core.checksum();
      const first: bigint[] = [];
      for (let f = 0; f < 300; f++) {
        for (let p = 0; p < 2; p++) core.setInputMask(p, scriptedMask(3, core.frame, p));
        core.advance();
        first.push(core.checksum());
      }
      core.load(saved);
      expect(core.frame).toBe(1500);
      expect(core.checksum()).toBe(atSave);
      for (let f = 0; f < 300; f++) {
        for (let p = 0; p < 2; p++) core.setInputMask(p, scriptedMask(3, core.frame, p));
        core.advance();
        expect(core.checksum()).toBe(first[f]);
      }
      expect(core.frame).toBe(1800);
    } finally {
      core.close();
    }
  });

  it('a state loaded into another instance continues identically; save right after load returns the loaded bytes', () => {
    const a = loadNestopia();
    const b = loadNestopia();
    try {
      scriptedRun(a, 5, 900);
      const s = a.save();
      b.load(s);
      const again = new Uint8Array(b.stateBytes);
      const n = b.saveInto(again);
      expect(again.subarray(0, n)).toEqual(s);
      expect(b.checksum()).toBe(a.checksum());
      expect(b.frame).toBe(900);
      for (let f = 0; f < 120; f++) {
        for (let p = 0; p < 2; p++) {
          a.setInputMask(p, scriptedMask(5, a.frame, p));
          b.setInputMask(p, scriptedMask(5, b.frame, p));
        }
        a.advance();
        b.advance();
        expect(b.checksum()).toBe(a.checksum());
      }
      // RetroArch's view of the same frame: the CRC of the raw retro_serialize bytes agrees too.
      expect(b.rawCrc32()).toBe(a.rawCrc32());
    } finally {
      a.close();
      b.close();
    }
  });

  it('reset() returns to the power-on state at frame 0', () => {
    const core = loadNestopia();
    try {
      const power = core.checksum();
      scriptedRun(core, 9, 200);
      expect(core.checksum()).not.toBe(power);
      core.reset();
      expect(core.frame).toBe(0);
      expect(core.checksum()).toBe(power);
      const a = scriptedRun(core, 9, 120);
      core.reset();
      expect(scriptedRun(core, 9, 120)).toEqual(a);
    } finally {
      core.close();
    }
  });
});
