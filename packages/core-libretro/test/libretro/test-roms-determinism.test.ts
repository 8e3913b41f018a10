// Our own GB and GBA test ROMs (test-roms/, built from source by the globalSetup) on Gambatte and
// mGBA: 3,000 frames of scripted input in two separate processes agree at every 60th frame, the
// ROM's RAM mix depends on the input (one toggled button on one frame changes every later
// checksum), and Gambatte's shared-start rule: its state holds the wall-clock second of the load
// (`rtcbase`, issue 14 fact b), so processes started in different seconds differ unless they start
// from one shared power-on state.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  dropOpposing,
  gambatteField,
  loadRomTarget,
  modelMix,
  ROM_TARGETS,
  type RomTarget,
  romMask,
  romMix,
  romRun,
  romTarget,
} from './test-roms.js';

const script = fileURLToPath(new URL('./run-scripted-rom.ts', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'core-libretro-roms-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface ChildRun {
  loadedAt: number;
  lines: string[];
  mix: { h: number; romFrame: number };
}

function runInChild(target: RomTarget, frames: number, seed: number, startFile = '-', flipFrame = -1): ChildRun {
  const out = execFileSync(
    process.execPath,
    [
      '--conditions=@netplay/source',
      '--import',
      'tsx',
      script,
      target.name,
      String(frames),
      String(seed),
      startFile,
      String(flipFrame),
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as ChildRun;
}

/**
 * Waits (at most a second and 100 ms) until the wall-clock second is a later one than now, and
 * 100 ms more: the core's `time()` reads the coarse clock, which lags `Date.now()` by up to a
 * scheduler tick, so right at the flip it can still give the earlier second (seen here: the core
 * wrote 1795568710 just after `Date.now()` read 1795568711).
 */
async function nextSecond(): Promise<number> {
  const s = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) === s) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  return Math.floor(Date.now() / 1000);
}

/** For a core that writes the wall clock into its state: a power-on state file every child starts from. */
function sharedStartFile(target: RomTarget): string {
  if (!target.wallClockInState) return '-';
  const core = loadRomTarget(target);
  try {
    const file = join(tmp, `${target.name}.start`);
    writeFileSync(file, core.powerOnState());
    return file;
  } finally {
    core.close();
  }
}

describe.each(ROM_TARGETS)('$name: determinism and input dependence', (target) => {
  it('two processes, 3,000 frames of scripted input: equal checksums at every 60th frame; the mix follows the input', () => {
    const start = sharedStartFile(target); // Gambatte only; mGBA's processes start on their own
    const a = runInChild(target, 3000, 7, start);
    const b = runInChild(target, 3000, 7, start);
    expect(a.lines).toHaveLength(50);
    expect(b.lines).toEqual(a.lines);
    expect(b.mix).toEqual(a.mix);
    // The ROM ran its mix once per frame (its counter, mod 256, after the first frame's boot).
    expect(a.mix.romFrame).toBe(2999 & 0xff);
    expect(new Set(a.lines.map((l) => l.split(':')[1])).size).toBe(50);

    // One button toggled on one frame (1,500): the same checksums up to it, different at every
    // 60th frame after it, and a different mix in the save RAM: the ROM reads the input we give.
    const flipped = runInChild(target, 3000, 7, start, 1500);
    expect(flipped.lines.slice(0, 25)).toEqual(a.lines.slice(0, 25)); // frames 60..1500
    for (let i = 25; i < 50; i++) expect(flipped.lines[i]).not.toBe(a.lines[i]);
    expect(flipped.mix.h).not.toBe(a.mix.h);

    // Another script: different from the first 60th frame on.
    const other = runInChild(target, 600, 8, start);
    for (let i = 0; i < 10; i++) expect(other.lines[i]).not.toBe(a.lines[i]);
  });
});

describe('the ROM sees exactly the input of each frame', () => {
  /** Runs 3,000 frames and returns the ROM's mix next to the model's, fed what each frame was given. */
  function modelRun(target: RomTarget, filter: (m: number) => number, options: Record<string, string> = {}) {
    const core = loadRomTarget(target, { options });
    try {
      const sram2 = core.nvram()[2]!;
      const masks: number[] = [];
      for (let i = 0; i < 3000; i++) {
        const m = romMask(13, core.frame);
        masks.push(m);
        core.setInputMask(0, m);
        core.advance();
      }
      const rom = target.rom.endsWith('.gba') ? 'gba' : 'gb';
      // The ROM boots during the first retro_run and mixes once in each later one, reading that frame's input.
      return {
        got: romMix(core).h,
        model: modelMix(rom, masks.slice(1).map(filter), sram2),
        // The same model with the input one frame early or late: must not match.
        early: modelMix(rom, masks.slice(0, -1).map(filter), sram2),
        late: modelMix(rom, [...masks.slice(2), 0].map(filter), sram2),
        unfiltered: modelMix(rom, masks.slice(1), sram2),
      };
    } finally {
      core.close();
    }
  }

  it('Gambatte: the mix in save RAM after 3,000 frames equals a model of the ROM fed the scripted input', () => {
    const { got, model, early, late } = modelRun(romTarget('gambatte-gb'), (m) => m);
    expect(got).toBe(model);
    expect(got).not.toBe(early);
    expect(got).not.toBe(late);
  });

  it.each(['mgba-gba', 'mgba-gb'] as const)(
    '%s: the same, with Left+Right and Up+Down dropped as mGBA does by default (mgba_allow_opposing_directions)',
    (name) => {
      const t = romTarget(name);
      const dropped = modelRun(t, dropOpposing);
      expect(dropped.got).toBe(dropped.model);
      expect(dropped.got).not.toBe(dropped.early);
      expect(dropped.got).not.toBe(dropped.late);
      expect(dropped.unfiltered).not.toBe(dropped.model); // the script does press opposites
      const allowed = modelRun(t, (m) => m, { mgba_allow_opposing_directions: 'yes' });
      expect(allowed.got).toBe(allowed.model);
    },
  );
});

describe('Gambatte: the shared-start rule (wall clock in the state)', () => {
  const gambatte = romTarget('gambatte-gb');

  it('power-on states made in different seconds differ exactly in rtcbase and rtchalt, which hold the second of the load', async () => {
    await nextSecond(); // leave room before the next second boundary
    const before = Math.floor(Date.now() / 1000);
    const a = loadRomTarget(gambatte);
    const afterA = Math.floor(Date.now() / 1000);
    await nextSecond();
    const beforeB = Math.floor(Date.now() / 1000);
    const b = loadRomTarget(gambatte);
    try {
      const ra = new Uint8Array(a.rawStateBytes);
      const rb = new Uint8Array(b.rawStateBytes);
      const na = a.saveRawInto(ra);
      const nb = b.saveRawInto(rb);
      expect(nb).toBe(na);
      const timeBytes = new Set<number>();
      for (const label of ['rtcbase', 'rtchalt']) {
        const f = gambatteField(ra.subarray(0, na), label);
        expect(f.size).toBe(4);
        const secondA = new DataView(ra.buffer, f.offset, 4).getUint32(0); // big-endian
        const secondB = new DataView(rb.buffer, f.offset, 4).getUint32(0);
        expect(secondA).toBeGreaterThanOrEqual(before);
        expect(secondA).toBeLessThanOrEqual(afterA);
        expect(secondB).toBeGreaterThanOrEqual(beforeB);
        expect(secondB).toBeGreaterThan(secondA);
        for (let i = 0; i < 4; i++) timeBytes.add(f.offset + i);
      }
      const differing: number[] = [];
      for (let i = 0; i < na; i++) if (ra[i] !== rb[i]) differing.push(i);
      expect(differing.length).toBeGreaterThan(0);
      for (const i of differing) expect(timeBytes.has(i)).toBe(true);
    } finally {
      a.close();
      b.close();
    }
  });

  it('two processes started in different seconds without a shared start differ at every 60th frame', async () => {
    const a = runInChild(gambatte, 600, 7);
    const second = await nextSecond(); // a's load is in an earlier second than b's
    const b = runInChild(gambatte, 600, 7);
    expect(Math.floor(b.loadedAt / 1000)).toBeGreaterThanOrEqual(second);
    expect(b.lines).toHaveLength(10);
    for (let i = 0; i < 10; i++) expect(b.lines[i]).not.toBe(a.lines[i]);
    // The game itself ran the same: the ROM's mix agrees; only the clock differs.
    expect(b.mix).toEqual(a.mix);
  });

  it('instances loaded in different seconds agree frame by frame from one shared powerOnState()', async () => {
    const a = loadRomTarget(gambatte);
    await nextSecond();
    const b = loadRomTarget(gambatte, { startState: a.powerOnState() });
    const alone = loadRomTarget(gambatte); // a later second too, its own start
    try {
      expect(b.checksum()).toBe(a.checksum());
      expect(alone.checksum()).not.toBe(a.checksum());
      for (let f = 0; f < 600; f++) {
        expect(romRun(b, 9, 1)).toEqual(romRun(a, 9, 1));
        expect(b.checksum()).toBe(a.checksum());
      }
    } finally {
      a.close();
      b.close();
      alone.close();
    }
  });
});

describe('mGBA: no wall clock in the state of our ROMs', () => {
  it.each(['mgba-gba', 'mgba-gb'] as const)('%s: power-on states made in different seconds are equal', async (name) => {
    const t = romTarget(name);
    const a = loadRomTarget(t);
    await nextSecond();
    const b = loadRomTarget(t);
    try {
      expect(b.powerOnState()).toEqual(a.powerOnState());
    } finally {
      a.close();
      b.close();
    }
  });
});
