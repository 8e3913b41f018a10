// Fixtures of the tests on the package's own GB and GBA test ROMs (test-roms/, built by
// scripts/build-test-roms.ts as vitest's globalSetup): which core runs which ROM, scripted input,
// and where each ROM keeps its input mix in the save RAM.
import { existsSync } from 'node:fs';
import { GB_TEST_ROM, GBA_TEST_ROM } from '../../scripts/build-test-roms.js';
import { DEBIAN_LIBRETRO_DIR, LibretroCore, type LibretroCoreOptions } from '../../src/index.js';
import { requireFile, scriptedMask } from './fixtures.js';

export { GB_TEST_ROM, GBA_TEST_ROM };

/** A core with one of our ROMs. */
export interface RomTarget {
  readonly name: 'gambatte-gb' | 'mgba-gba' | 'mgba-gb';
  readonly core: string;
  readonly rom: string;
  /** Whether the core writes the wall clock into its state (Gambatte's `rtcbase`, issue 14 fact b). */
  readonly wallClockInState: boolean;
  /**
   * Whether `nvram()` (RETRO_MEMORY_SAVE_RAM) still shows the game's save RAM after a state load.
   * Gambatte: yes (its state holds the SRAM and loads it back in place). mGBA 0.10.1: no with
   * these ROMs — the game's SRAM rolls back with the state, but the load masks it and the exposed
   * buffer keeps the bytes from before, until the game has not written its save RAM for 16 frames,
   * which these ROMs (writing every frame) never do (test-roms-rollback.test.ts; README, mGBA).
   */
  readonly saveRamFollowsLoads: boolean;
}

export const ROM_TARGETS: readonly RomTarget[] = [
  {
    name: 'gambatte-gb',
    core: `${DEBIAN_LIBRETRO_DIR}/gambatte_libretro.so`,
    rom: GB_TEST_ROM,
    wallClockInState: true,
    saveRamFollowsLoads: true,
  },
  {
    name: 'mgba-gba',
    core: `${DEBIAN_LIBRETRO_DIR}/mgba_libretro.so`,
    rom: GBA_TEST_ROM,
    wallClockInState: false,
    saveRamFollowsLoads: false,
  },
  {
    name: 'mgba-gb',
    core: `${DEBIAN_LIBRETRO_DIR}/mgba_libretro.so`,
    rom: GB_TEST_ROM,
    wallClockInState: false,
    saveRamFollowsLoads: false,
  },
];

/** The target called `name`. */
export function romTarget(name: RomTarget['name']): RomTarget {
  const t = ROM_TARGETS.find((x) => x.name === name);
  if (!t) throw new Error(`no ROM target ${name}`);
  return t;
}

/** Loads `target` with one port; a missing core or ROM fails and says how to get it. */
export function loadRomTarget(target: RomTarget, extra: Partial<LibretroCoreOptions> = {}): LibretroCore {
  requireFile(target.core);
  if (!existsSync(target.rom))
    throw new Error(
      `${target.rom} is missing: the test ROMs are built by scripts/build-test-roms.ts (vitest.libretro.config.ts's globalSetup; Debian packages sdcc and binutils-arm-none-eabi)`,
    );
  return LibretroCore.load({ core: target.core, content: target.rom, ports: 1, ...extra });
}

/**
 * Input of frame `f`: the scripted input of fixtures.ts on port 0 (B, A, directions, L, R every
 * 6 frames; START at 60..70), with RetroPad A toggled on frame `flipFrame` only.
 */
export function romMask(seed: number, f: number, flipFrame = -1): number {
  return scriptedMask(seed, f, 0) ^ (f === flipFrame ? 1 << 8 : 0);
}

/** Runs `frames` frames of {@link romMask} input; returns `frame:checksum` after every 60th frame. */
export function romRun(core: LibretroCore, seed: number, frames: number, flipFrame = -1): string[] {
  const out: string[] = [];
  for (let i = 0; i < frames; i++) {
    core.setInputMask(0, romMask(seed, core.frame, flipFrame));
    core.advance();
    if (core.frame % 60 === 0) out.push(`${core.frame}:${core.checksum().toString(16)}`);
  }
  return out;
}

/**
 * What the ROM wrote to its save RAM: the low 16 bits of its input mix `h`, its own frame counter
 * (mod 256) and its boot counter — the same layout on GB (0xA000..) and GBA (0x0E000000..).
 */
export function romMix(core: LibretroCore): { h: number; romFrame: number; boots: number } {
  const sram = core.nvram();
  return { h: sram[0]! | (sram[1]! << 8), romFrame: sram[2]!, boots: sram[3]! };
}

/**
 * The fields of a Gambatte state (its `retro_serialize` bytes): Gambatte writes each field as a
 * NUL-terminated label, a 24-bit big-endian size and the value.
 */
export function gambatteField(raw: Uint8Array, label: string): { offset: number; size: number } {
  const key = Buffer.from(`${label}\0`, 'latin1');
  const at = Buffer.from(raw.buffer, raw.byteOffset, raw.length).indexOf(key);
  if (at < 0) throw new Error(`no field ${label} in this Gambatte state`);
  const s = at + key.length;
  return { offset: s + 3, size: (raw[s]! << 16) | (raw[s + 1]! << 8) | raw[s + 2]! };
}

/** RetroPad bit → the GB ROM's joy bit (Start Select B A Down Up Left Right). */
const GB_KEYS: readonly (readonly [number, number])[] = [
  [8, 4], // A
  [0, 5], // B
  [2, 6], // SELECT
  [3, 7], // START
  [4, 2], // UP
  [5, 3], // DOWN
  [6, 1], // LEFT
  [7, 0], // RIGHT
];
/** RetroPad bit → GBA KEYINPUT bit (A B Select Start Right Left Up Down R L). */
const GBA_KEYS: readonly (readonly [number, number])[] = [
  [8, 0], // A
  [0, 1], // B
  [2, 2], // SELECT
  [3, 3], // START
  [7, 4], // RIGHT
  [6, 5], // LEFT
  [4, 6], // UP
  [5, 7], // DOWN
  [11, 8], // R
  [10, 9], // L
];

function keys(mask: number, table: readonly (readonly [number, number])[]): number {
  let k = 0;
  for (const [pad, bit] of table) k |= ((mask >> pad) & 1) << bit;
  return k;
}

/** Drops Left+Right and Up+Down pressed together, as mGBA does unless `mgba_allow_opposing_directions` is `yes`. */
export function dropOpposing(mask: number): number {
  let m = mask;
  if ((m & 0xc0) === 0xc0) m &= ~0xc0;
  if ((m & 0x30) === 0x30) m &= ~0x30;
  return m;
}

/**
 * The low 16 bits of the ROM's mix `h` after it ran once on each of `masks` (RetroPad masks, in
 * order), computed here from the assembly's description, not by the ROM. `sram2` is the save RAM
 * byte 2 at power-on (what the first pass reads back).
 */
export function modelMix(rom: 'gb' | 'gba', masks: readonly number[], sram2: number): number {
  let s2 = sram2;
  let frame = 0;
  if (rom === 'gb') {
    let h = 0;
    for (const m of masks) {
      h = ((h << 1) | (h >> 15)) & 0xffff; // rotl16
      h ^= s2 ^ keys(m, GB_KEYS);
      frame = (frame + 1) & 0xff;
      h = (h + (frame << 8)) & 0xffff; // h.hi += frame
      s2 = frame;
    }
    return h;
  }
  // The low 16 bits of ((h + sram2) ^ keys) * 0x01000193 ^ frame depend only on the low 16 bits.
  let h = 0x811c9dc5 & 0xffff;
  for (const m of masks) {
    h = ((h + s2) & 0xffff) ^ keys(m, GBA_KEYS);
    h = Math.imul(h, 0x01000193) & 0xffff;
    frame++;
    h = (h ^ frame) & 0xffff;
    s2 = frame & 0xff;
  }
  return h;
}
