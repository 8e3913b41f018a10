import { sha1 } from '@noble/hashes/legacy.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { ROM_DATABASE } from './rom-database.generated.js';

/** The quirk names of the chip-8-database (`quirks.json`). */
export interface DatabaseQuirks {
  /** 8xy6/8xyE shift vX in place, ignoring vY ({@link Chip8Quirk.Shift}). Absent: false. */
  readonly shift?: boolean;
  /** Fx55/Fx65 increment I by x instead of x + 1 ({@link Chip8Quirk.MemoryIncrementByX}). Absent: false. */
  readonly memoryIncrementByX?: boolean;
  /** Fx55/Fx65 leave I unchanged (neither memory flag); wins over `memoryIncrementByX`. Absent: false. */
  readonly memoryLeaveIUnchanged?: boolean;
  /** Sprites wrap around the screen edges instead of clipping (true clears {@link Chip8Quirk.Clip}). Absent: false, they clip. */
  readonly wrap?: boolean;
  /** Bxnn jumps to xnn + vX instead of nnn + v0 ({@link Chip8Quirk.Jump}). Absent: false. */
  readonly jump?: boolean;
  /** Dxyn waits for the 60 Hz vertical blank, ending the frame (both display-wait flags). Absent: false. */
  readonly vblank?: boolean;
  /** 8xy1/8xy2/8xy3 reset vF to 0 ({@link Chip8Quirk.Logic}). Absent: false. */
  readonly logic?: boolean;
}

/** A platform preset of the database (`platforms.json`). */
export interface DatabasePlatform {
  /** Instructions per 60 Hz frame on this platform (e.g. 15 for the COSMAC VIP, 30 for SUPER-CHIP). */
  readonly tickrate: number;
  /** The platform's quirks, before a ROM's `quirkyPlatforms` overrides. */
  readonly quirks: DatabaseQuirks;
  /** Display sizes the platform supports, as `WIDTHxHEIGHT` in pixels (e.g. `64x32`, `128x64`). Informative: the core picks its mode itself. */
  readonly resolutions: readonly string[];
}

/** One ROM of the database: `programs.json` → `roms[sha1]`, with the program title. */
export interface DatabaseRom {
  /** The program's title (`programs.json`), shown by the CLI and the demos. */
  readonly title: string;
  /** The ROM's file name in the database's sources (e.g. `spaceracer.ch8`). Informative only: ROMs are looked up by SHA-1. */
  readonly file: string;
  /** Platform ids the ROM runs on, the preferred one first. */
  readonly platforms: readonly string[];
  /** Per-platform quirk overrides. */
  readonly quirkyPlatforms?: Readonly<Record<string, DatabaseQuirks>>;
  /** Instructions per 60 Hz frame this ROM wants; absent: its platform's `tickrate`. */
  readonly tickrate?: number;
  /** Which CHIP-8 key each control uses (`up`, `down`, `left`, `right`, `a`, `b`). */
  readonly keys?: Readonly<Record<string, number>>;
}

/** The shape of the bundled database subset. */
export interface RomDatabase {
  /** Platform presets by database platform id (`originalChip8`, `superchip`, `xochip`, …). */
  readonly platforms: Readonly<Record<string, DatabasePlatform>>;
  /** ROM entries by the ROM's SHA-1, lowercase hex ({@link romSha1}). */
  readonly roms: Readonly<Record<string, DatabaseRom>>;
}

/** The bundled chip-8-database subset (MIT; the fixture ROMs: chip8Archive and Timendus). */
export const romDatabase: RomDatabase = ROM_DATABASE;

/** The SHA-1 of a ROM as lowercase hex, the database key. */
export function romSha1(rom: Uint8Array): string {
  return bytesToHex(sha1(rom));
}

/** Looks a ROM up in a database (the bundled subset by default); undefined when it is not there. */
export function lookupRom(rom: Uint8Array, database: RomDatabase = romDatabase): DatabaseRom | undefined {
  const entry = database.roms[romSha1(rom)];
  return entry;
}
