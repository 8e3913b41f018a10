// Shared fixtures of the real-core tests: Debian's Nestopia and the free efp ROM, scripted input.
import { existsSync } from 'node:fs';
import { DEBIAN_LIBRETRO_DIR, LibretroCore, type LibretroCoreOptions } from '../../src/index.js';

export const NESTOPIA = `${DEBIAN_LIBRETRO_DIR}/nestopia_libretro.so`;
export const GAMBATTE = `${DEBIAN_LIBRETRO_DIR}/gambatte_libretro.so`;
export const EFP = '/usr/share/nes/efp.nes';

/** Fails (never skips) when a file the real-core tests need is missing. */
export function requireFile(path: string): string {
  if (!existsSync(path))
    throw new Error(`${path} is missing: run .ci/setup-libretro.sh (Debian packages libretro-nestopia, efp, ...)`);
  return path;
}

/** Nestopia with efp.nes, two ports. */
export function loadNestopia(extra: Partial<LibretroCoreOptions> = {}): LibretroCore {
  return LibretroCore.load({ core: requireFile(NESTOPIA), content: requireFile(EFP), ports: 2, ...extra });
}

/**
 * Buttons the scripted input presses: B, A, the directions, L, R. Not SELECT/START (START is held
 * once, to leave the title), and not X/Y: Debian's Nestopia maps them to turbo A/B, whose pulse
 * counter lives in the libretro wrapper outside the savestate (see synctest.test.ts).
 */
export const SCRIPTED_BUTTONS = 0x0df1;

/**
 * Scripted input of frame `f` for `port`: a seeded xorshift decides, every 6 frames, which of the
 * RetroPad's 12 buttons are held, with START held through frames 60..70 to leave the title.
 */
export function scriptedMask(seed: number, f: number, port: number): number {
  let x = (seed ^ Math.imul(Math.floor(f / 6) + 1, 0x9e3779b1) ^ Math.imul(port + 1, 0x85ebca6b)) >>> 0;
  x ^= x << 13;
  x >>>= 0;
  x ^= x >>> 17;
  x ^= x << 5;
  x >>>= 0;
  let mask = x & SCRIPTED_BUTTONS;
  if (f >= 60 && f < 70 && port === 0) mask |= 1 << 3;
  return mask;
}

/** Runs `frames` frames of scripted input and returns the checksum after every 60th frame. */
export function scriptedRun(core: LibretroCore, seed: number, frames: number): string[] {
  const out: string[] = [];
  for (let f = 0; f < frames; f++) {
    for (let p = 0; p < core.ports; p++) core.setInputMask(p, scriptedMask(seed, core.frame, p));
    core.advance();
    if (core.frame % 60 === 0) out.push(`${core.frame}:${core.checksum().toString(16)}`);
  }
  return out;
}

export const MGBA = `${DEBIAN_LIBRETRO_DIR}/mgba_libretro.so`;

/** A minimal GBA ROM mGBA accepts: an ARM `b .` at the entry point and the fixed header byte 0x96. */
export function tinyGbaRom(): Uint8Array {
  const rom = new Uint8Array(1024);
  rom.set([0xfe, 0xff, 0xff, 0xea], 0);
  rom[0xb2] = 0x96;
  return rom;
}

/** A minimal NES ROM (iNES, mapper 0, 16 KiB PRG + 8 KiB CHR) whose reset handler loops forever. */
export function tinyNesRom(): Uint8Array {
  const rom = new Uint8Array(16 + 16384 + 8192);
  rom.set([0x4e, 0x45, 0x53, 0x1a, 1, 1, 0, 0], 0);
  const prg = 16;
  rom.set([0x4c, 0x00, 0xc0], prg); // $C000: JMP $C000
  rom.set([0x00, 0xc0, 0x00, 0xc0, 0x00, 0xc0], prg + 0x3ffa); // NMI, RESET, IRQ vectors
  return rom;
}

/** Gambatte with efp.nes taken as a plain Game Boy ROM (Gambatte accepts any bytes): a second real core without a GB ROM. */
export function loadGambatte(extra: Partial<LibretroCoreOptions> = {}): LibretroCore {
  return LibretroCore.load({
    core: requireFile(`${DEBIAN_LIBRETRO_DIR}/gambatte_libretro.so`),
    content: requireFile(EFP),
    contentName: 'efp.gb',
    ports: 1,
    ...extra,
  });
}
