import { sha1 } from '@noble/hashes/legacy.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { ROM_DATABASE } from './rom-database.generated.js';

/** The quirk names of the chip-8-database (`quirks.json`). */
export interface DatabaseQuirks {
  readonly shift?: boolean;
  readonly memoryIncrementByX?: boolean;
  readonly memoryLeaveIUnchanged?: boolean;
  readonly wrap?: boolean;
  readonly jump?: boolean;
  readonly vblank?: boolean;
  readonly logic?: boolean;
}

/** A platform preset of the database (`platforms.json`). */
export interface DatabasePlatform {
  readonly tickrate: number;
  readonly quirks: DatabaseQuirks;
  readonly resolutions: readonly string[];
}

/** One ROM of the database: `programs.json` → `roms[sha1]`, with the program title. */
export interface DatabaseRom {
  readonly title: string;
  readonly file: string;
  /** Platform ids the ROM runs on, the preferred one first. */
  readonly platforms: readonly string[];
  /** Per-platform quirk overrides. */
  readonly quirkyPlatforms?: Readonly<Record<string, DatabaseQuirks>>;
  readonly tickrate?: number;
  /** Which CHIP-8 key each control uses (`up`, `down`, `left`, `right`, `a`, `b`). */
  readonly keys?: Readonly<Record<string, number>>;
}

/** The shape of the bundled database subset. */
export interface RomDatabase {
  readonly platforms: Readonly<Record<string, DatabasePlatform>>;
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
