import { WasmCoreError } from './errors.js';

/** The machines the CHIP-8 core emulates. The numbers are the core's `c8_configure` codes. */
export const Chip8Platform = {
  /** COSMAC VIP CHIP-8: 64x32, 4 KiB. */
  Chip8: 0,
  /** CHIP-8 as modern interpreters run it (no VIP quirks). */
  ModernChip8: 1,
  /** SUPER-CHIP 1.1 as modern interpreters (and Octo) run it. */
  SuperChipModern: 2,
  /** SUPER-CHIP 1.1 as it ran on the HP48: display wait and half-pixel scrolling in lores. */
  SuperChipLegacy: 3,
  /** XO-CHIP: 64 KiB, two bitplanes, audio patterns, F000 nnnn. */
  XoChip: 4,
} as const;
/** A value of {@link Chip8Platform}. */
export type Chip8Platform = (typeof Chip8Platform)[keyof typeof Chip8Platform];

/** The names of the platforms, as options and the README spell them. */
export const CHIP8_PLATFORM_NAMES: Readonly<Record<Chip8Platform, string>> = {
  0: 'chip8',
  1: 'modern-chip8',
  2: 'schip-modern',
  3: 'schip-legacy',
  4: 'xochip',
};

/**
 * The quirk flags (bits of the core's quirk word). The names follow QUIRKS.md; "Timendus" is the
 * label on the 5-quirks screen.
 */
export const Chip8Quirk = {
  /** `vF reset`: 8xy1/8xy2/8xy3 set vF = 0 (database `logic`). */
  Logic: 1,
  /** `Memory`: Fx55/Fx65 increment I by x + 1 (VIP). */
  MemoryIncrement: 2,
  /** Fx55/Fx65 increment I by x (CHIP-48, SCHIP 1.0; database `memoryIncrementByX`). Neither flag: I unchanged. */
  MemoryIncrementByX: 4,
  /** `Disp.wait` in lores: Dxyn ends the frame (database `vblank`). */
  DisplayWaitLores: 8,
  /** `Disp.wait` in hires. */
  DisplayWaitHires: 16,
  /** `Clipping`: sprites clip at the right and bottom edges (database `wrap` is the inverse). */
  Clip: 32,
  /** `Shifting`: 8xy6/8xyE shift vX in place (database `shift`). */
  Shift: 64,
  /** `Jumping`: Bxnn jumps to xnn + vX (database `jump`). */
  Jump: 128,
  /** Octo `vfOrderQuirks`: for x = F the result overwrites the flag. */
  VfOrder: 256,
  /** Fx1E sets vF when I + vX > 0xFFF (Amiga; SCTEST error 24). */
  Fx1eFlag: 512,
  /** Legacy SUPER-CHIP: lores scrolling moves by half pixels. */
  ScrollHalfLores: 1024,
  /** Legacy SUPER-CHIP: in hires, Dxyn sets vF to the rows that collided plus the rows clipped at the bottom. */
  CollisionRows: 2048,
  /** Legacy SUPER-CHIP: in lores, Dxy0 draws an 8x16 sprite instead of 16x16. */
  LoresDxy0Narrow: 4096,
  /** Legacy SUPER-CHIP: 00FE/00FF switch the mode and keep the screen (else they clear it). */
  ModeKeepsScreen: 8192,
} as const;
/** A flag of {@link Chip8Quirk}. */
export type Chip8QuirkFlag = (typeof Chip8Quirk)[keyof typeof Chip8Quirk];

const Q = Chip8Quirk;
/** The quirks each platform uses by default (QUIRKS.md §2 and §3). */
export const PLATFORM_QUIRKS: Readonly<Record<Chip8Platform, number>> = {
  0: Q.Logic | Q.MemoryIncrement | Q.DisplayWaitLores | Q.DisplayWaitHires | Q.Clip,
  1: Q.MemoryIncrement | Q.Clip,
  2: Q.Shift | Q.Jump | Q.Clip,
  3:
    Q.Shift |
    Q.Jump |
    Q.Clip |
    Q.DisplayWaitLores |
    Q.ScrollHalfLores |
    Q.CollisionRows |
    Q.LoresDxy0Narrow |
    Q.ModeKeepsScreen,
  4: Q.MemoryIncrement,
};

/** The default instructions per frame of each platform (chip-8-database `platforms.json`). */
export const PLATFORM_TICKRATE: Readonly<Record<Chip8Platform, number>> = {
  0: 15,
  1: 12,
  2: 30,
  3: 30,
  4: 100,
};

/** The default PRNG seed of Cxnn. */
export const DEFAULT_SEED = 0x2545f491;

/** A CHIP-8 machine configuration. */
export interface Chip8Config {
  /** The machine emulated: memory size, display modes and which opcodes exist; see {@link Chip8Platform}. */
  readonly platform: Chip8Platform;
  /** A combination of {@link Chip8Quirk} flags. */
  readonly quirks: number;
  /** Instructions per 60 Hz frame, 1..1_000_000. */
  readonly tickrate: number;
  /** Seed of the Cxnn generator (32-bit; 0 picks the default). */
  readonly seed: number;
  /**
   * Per port, the CHIP-8 key each input bit presses: `keyMap[port][bit]` is 0..15, or -1 for none.
   * Ports not listed use the identity map (input bit k = CHIP-8 key k).
   */
  readonly keyMap: ReadonlyArray<ReadonlyArray<number>>;
}

/** The identity key map: input bit k presses CHIP-8 key k. */
export const IDENTITY_KEYS: readonly number[] = Array.from({ length: 16 }, (_, k) => k);

/** The configuration a platform gets by default. */
export function platformConfig(platform: Chip8Platform): Chip8Config {
  return {
    platform,
    quirks: PLATFORM_QUIRKS[platform],
    tickrate: PLATFORM_TICKRATE[platform],
    seed: DEFAULT_SEED,
    keyMap: [],
  };
}

/** Checks a configuration; throws {@link WasmCoreError} `bad-option`. */
export function checkConfig(config: Chip8Config): void {
  if (!(config.platform in CHIP8_PLATFORM_NAMES)) {
    throw new WasmCoreError('bad-option', `unknown platform ${String(config.platform)}`);
  }
  if (!Number.isInteger(config.quirks) || config.quirks < 0 || config.quirks > 0x3fff) {
    throw new WasmCoreError('bad-option', `quirks must be a combination of Chip8Quirk flags`);
  }
  if (!Number.isInteger(config.tickrate) || config.tickrate < 1 || config.tickrate > 1_000_000) {
    throw new WasmCoreError('bad-option', `tickrate must be an integer in 1..1000000`);
  }
  if (!Number.isInteger(config.seed) || config.seed < 0 || config.seed > 0xffff_ffff) {
    throw new WasmCoreError('bad-option', `seed must be a 32-bit unsigned integer`);
  }
  if (config.keyMap.length > 4) throw new WasmCoreError('bad-option', 'at most 4 ports have key maps');
  for (const keys of config.keyMap) {
    if (keys.length > 16) throw new WasmCoreError('bad-option', 'a port key map has at most 16 bits');
    for (const k of keys) {
      if (!Number.isInteger(k) || k < -1 || k > 15) {
        throw new WasmCoreError('bad-option', `key map entries are CHIP-8 keys 0..15 or -1, not ${k}`);
      }
    }
  }
}
