import {
  type Chip8Config,
  Chip8Platform,
  Chip8Quirk,
  checkConfig,
  DEFAULT_SEED,
  PLATFORM_QUIRKS,
} from './chip8-config.js';
import {
  type DatabaseQuirks,
  type DatabaseRom,
  lookupRom,
  type RomDatabase,
  romDatabase,
  romSha1,
} from './rom-database.js';

/** Bits of the "pad" input layout: the controls the database's `keys` entries name. */
export const PadButton = {
  /** Bit 0 (mask 0x01): the game's `up` key. */
  Up: 0,
  /** Bit 1 (mask 0x02): the game's `down` key. */
  Down: 1,
  /** Bit 2 (mask 0x04): the game's `left` key. */
  Left: 2,
  /** Bit 3 (mask 0x08): the game's `right` key. */
  Right: 3,
  /** Bit 4 (mask 0x10): the game's `a` (action) key. */
  A: 4,
  /** Bit 5 (mask 0x20): the game's `b` (second action) key. */
  B: 5,
} as const;

/**
 * Per-game multiplayer key maps the database does not have (it lists one player's keys), by SHA-1.
 * Each entry maps, per port, pad bits to CHIP-8 keys. From the games' sources (fixtures README).
 */
export const MULTIPLAYER_KEYS: Readonly<Record<string, ReadonlyArray<Readonly<Record<string, number>>>>> = {
  // Space Racer (spaceracer.ch8): P1 4 up / 7 down, P2 D up / E down.
  '659cb966e976fcbcae76f6a8a07c65be4d18aae8': [
    { up: 0x4, down: 0x7 },
    { up: 0xd, down: 0xe },
  ],
  // Wonky Pong (wonkypong.ch8): P1 7 up / A down, P2 E up / F down.
  '518c1d40f5d768ee49d2b7951d998588ef8238ba': [
    { up: 0x7, down: 0xa },
    { up: 0xe, down: 0xf },
  ],
};

/** The settings a ROM runs with unless the database or the caller says otherwise. */
export const DEFAULT_SETUP = {
  /** XO-CHIP runs every CHIP-8, SUPER-CHIP and XO-CHIP opcode, with Octo's behaviour. */
  platform: Chip8Platform.XoChip,
  /** XO-CHIP's default quirks ({@link PLATFORM_QUIRKS}): Fx55/Fx65 increment I by x + 1, nothing else. */
  quirks: PLATFORM_QUIRKS[Chip8Platform.XoChip],
  /** Octo's default. */
  tickrate: 20,
} as const;

/** Options for picking a ROM's configuration; every field overrides the database. */
export interface RomSetupOptions {
  /** The machine to emulate; overrides the database's platform (and, unless `quirks` is given, brings that platform's {@link PLATFORM_QUIRKS}). */
  readonly platform?: Chip8Platform;
  /** A combination of {@link Chip8Quirk} flags; overrides the platform's and the database's quirks. */
  readonly quirks?: number;
  /** Instructions per 60 Hz frame, 1..1_000_000; default: the ROM's database tickrate, else its platform's, else 20. */
  readonly tickrate?: number;
  /** Seed of the Cxnn random generator (32-bit; 0 picks the default); default {@link DEFAULT_SEED}. Every peer must use the same. */
  readonly seed?: number;
  /** Per port, input bit → CHIP-8 key (or -1). Overrides the layout's map. */
  readonly keyMap?: ReadonlyArray<ReadonlyArray<number>>;
  /**
   * `keypad`: each port's 16 bits are the 16 CHIP-8 keys. `pad`: the bits are {@link PadButton}s
   * mapped through the game's key map (the database's `keys`, or a built-in multiplayer map).
   * Default: `pad` for the games with a built-in multiplayer map ({@link MULTIPLAYER_KEYS}), else
   * `keypad` (the database's single-player `keys` apply only when `pad` is asked for).
   */
  readonly layout?: 'keypad' | 'pad';
  /** The database to look the ROM up in (default: the bundled subset); `null` skips the lookup. */
  readonly database?: RomDatabase | null;
}

/** What {@link resolveRomSetup} decided. */
export interface RomSetup {
  /** The ROM's SHA-1, lowercase hex (40 characters): its database key. */
  readonly sha1: string;
  /** The database entry, or undefined for an unknown ROM. */
  readonly entry: DatabaseRom | undefined;
  /** The program's title from the database, or undefined for an unknown ROM. */
  readonly title: string | undefined;
  /** The database platform id used, e.g. `originalChip8`, or undefined. */
  readonly databasePlatform: string | undefined;
  /** The input layout chosen: the option, else `pad` for games with a built-in multiplayer map, else `keypad` (see {@link RomSetupOptions.layout}). */
  readonly layout: 'keypad' | 'pad';
  /** The configuration to start the core with: every option applied over the database's settings, already checked. */
  readonly config: Chip8Config;
}

const PLATFORM_OF_DATABASE_ID: Readonly<Record<string, Chip8Platform>> = {
  originalChip8: Chip8Platform.Chip8,
  hybridVIP: Chip8Platform.Chip8,
  chip8x: Chip8Platform.Chip8,
  modernChip8: Chip8Platform.ModernChip8,
  chip48: Chip8Platform.ModernChip8,
  superchip1: Chip8Platform.SuperChipModern,
  superchip: Chip8Platform.SuperChipModern,
  megachip8: Chip8Platform.SuperChipModern,
  xochip: Chip8Platform.XoChip,
};

/** Converts database quirks to {@link Chip8Quirk} flags. */
export function quirksFromDatabase(q: DatabaseQuirks): number {
  let flags = 0;
  if (q.logic === true) flags |= Chip8Quirk.Logic;
  if (q.memoryLeaveIUnchanged === true) {
    // I unchanged: neither memory flag.
  } else if (q.memoryIncrementByX === true) flags |= Chip8Quirk.MemoryIncrementByX;
  else flags |= Chip8Quirk.MemoryIncrement;
  if (q.vblank === true) flags |= Chip8Quirk.DisplayWaitLores | Chip8Quirk.DisplayWaitHires;
  if (q.wrap !== true) flags |= Chip8Quirk.Clip;
  if (q.shift === true) flags |= Chip8Quirk.Shift;
  if (q.jump === true) flags |= Chip8Quirk.Jump;
  return flags;
}

function padKeyMap(keys: Readonly<Record<string, number>>): number[] {
  const map = new Array<number>(16).fill(-1);
  const names: Record<string, number> = { up: 0, down: 1, left: 2, right: 3, a: 4, b: 5 };
  for (const [name, key] of Object.entries(keys)) {
    const bit = names[name];
    if (bit !== undefined && Number.isInteger(key) && key >= 0 && key <= 15) map[bit] = key;
  }
  return map;
}

/**
 * Picks the configuration of a ROM: SHA-1 → database entry → its first platform (or the first
 * platform with quirk overrides), that platform's quirks with the ROM's overrides, and the ROM's
 * tickrate (else the platform's). A ROM that is not in the database gets {@link DEFAULT_SETUP}.
 * Every field of `options` overrides what the database says.
 */
export function resolveRomSetup(rom: Uint8Array, options: RomSetupOptions = {}): RomSetup {
  const sha1 = romSha1(rom);
  const database = options.database === null ? undefined : (options.database ?? romDatabase);
  const entry = database === undefined ? undefined : lookupRom(rom, database);
  let platform: Chip8Platform = DEFAULT_SETUP.platform;
  let quirks: number = DEFAULT_SETUP.quirks;
  let tickrate: number = DEFAULT_SETUP.tickrate;
  let databasePlatform: string | undefined;
  if (entry !== undefined && database !== undefined) {
    const id = entry.platforms[0] ?? Object.keys(entry.quirkyPlatforms ?? {})[0];
    const preset = id === undefined ? undefined : database.platforms[id];
    if (id !== undefined && preset !== undefined) {
      databasePlatform = id;
      platform = PLATFORM_OF_DATABASE_ID[id] ?? DEFAULT_SETUP.platform;
      quirks = quirksFromDatabase({ ...preset.quirks, ...(entry.quirkyPlatforms?.[id] ?? {}) });
      tickrate = entry.tickrate ?? preset.tickrate;
    }
  }
  const multi = MULTIPLAYER_KEYS[sha1];
  const padMaps: number[][] | undefined =
    multi !== undefined
      ? multi.map(padKeyMap)
      : entry?.keys !== undefined
        ? [padKeyMap(entry.keys), padKeyMap(entry.keys), padKeyMap(entry.keys), padKeyMap(entry.keys)]
        : undefined;
  const layout = options.layout ?? (multi !== undefined ? 'pad' : 'keypad');
  const keyMap = options.keyMap ?? (layout === 'pad' ? (padMaps ?? []) : []);
  const config: Chip8Config = {
    platform: options.platform ?? platform,
    quirks: options.quirks ?? (options.platform !== undefined ? PLATFORM_QUIRKS[options.platform] : quirks),
    tickrate: options.tickrate ?? tickrate,
    seed: options.seed ?? DEFAULT_SEED,
    keyMap,
  };
  checkConfig(config);
  return { sha1, entry, title: entry?.title, databasePlatform, layout, config };
}
