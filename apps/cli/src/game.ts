import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import {
  LibretroCore,
  LibretroError,
  type ProbeReport,
  probeLibretroCore,
  RetroPad,
  resolveLibretroCore,
} from '@netplay/core-libretro';
import { PadButton } from '@netplay/core-wasm';
import { type ContentInfo, hashContent } from '@netplay/session';
import type { Core } from '@netplay/state';
import { Prng } from '@netplay/transport';
import { RacerBot } from './bot.js';
import { chip8Content } from './content.js';
import { CliError, ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';
import { PadExtra } from './keyboard.js';
import { LibretroScreen } from './libretro-screen.js';
import { drawScreen } from './render.js';
import { makeCore, readRom, SPACE_RACER_URL } from './rom.js';

/** A bot: each call returns this frame's input for its port (the same array every call). */
export interface Bot {
  next(): Uint8Array;
}

/** A game the CLI runs: a core, what INFO announces for it, its picture, keys and bot. */
export interface Game {
  readonly core: Core;
  readonly content: ContentInfo;
  readonly title: string;
  /** `chip8` or `libretro`. */
  readonly kind: 'chip8' | 'libretro';
  /** The picture as terminal text, or undefined before the first frame. */
  screen(): string | undefined;
  /** The core's input for the keyboard's pad bits (`PadButton` and `PadExtra`), in a reused array. */
  padInput(pad: number): Uint8Array;
  /** A seeded bot for this game. */
  bot(seed: number): Bot;
  /**
   * Input bits (of a port's 16-bit little-endian input) that bots and synctest may press: on
   * Nestopia, RetroPad X/Y are turbo A/B, whose pulse counter lives outside the savestate.
   */
  readonly safeButtons: number;
  /** Frees the core (libretro: unloads it and deletes its private copy). */
  close(): void;
}

/** Which game: `--rom` alone is CHIP-8; `--core NAME|PATH --rom FILE` a libretro core. */
export interface GameSpec {
  readonly rom?: string;
  readonly core?: string;
}

/** RetroPad buttons of Nestopia that break rollback (turbo A/B: state kept outside the savestate). */
const NESTOPIA_UNSAFE = RetroPad.X | RetroPad.Y;

/** RetroPad bits a bot presses on a libretro core: the d-pad, A, B, Start and Select (never X/Y). */
const BOT_BUTTONS = [RetroPad.UP, RetroPad.DOWN, RetroPad.LEFT, RetroPad.RIGHT, RetroPad.A, RetroPad.B] as const;

/** The keyboard's pad bits → RetroPad bits. */
const PAD_TO_RETROPAD: readonly [number, number][] = [
  [PadButton.Up, RetroPad.UP],
  [PadButton.Down, RetroPad.DOWN],
  [PadButton.Left, RetroPad.LEFT],
  [PadButton.Right, RetroPad.RIGHT],
  [PadButton.A, RetroPad.A],
  [PadButton.B, RetroPad.B],
  [PadExtra.Start, RetroPad.START],
  [PadExtra.Select, RetroPad.SELECT],
];

/** The keyboard's pad bits (`PadButton`, `PadExtra`) as a RetroPad mask (never X/Y, L, R). */
export function retroPadMask(pad: number): number {
  let mask = 0;
  for (const [from, to] of PAD_TO_RETROPAD) if (pad & (1 << from)) mask |= to;
  return mask;
}

/**
 * A libretro bot: holds a random d-pad direction, often with A or B, for 4–44 frames; presses
 * Start alone now and then (menus). Seeded; never X/Y.
 */
export class RetroPadBot implements Bot {
  private readonly prng: Prng;
  private mask = 0;
  private holdFor = 0;
  readonly input = new Uint8Array(2);

  constructor(
    seed: number,
    private readonly safe: number = 0xffff,
  ) {
    this.prng = new Prng(seed >>> 0);
  }

  next(): Uint8Array {
    if (this.holdFor-- <= 0) {
      const r = this.prng.nextFloat();
      if (r < 0.08) this.mask = RetroPad.START;
      else if (r < 0.15) this.mask = 0;
      else {
        this.mask = BOT_BUTTONS[this.prng.int(0, 4)]!;
        if (this.prng.nextFloat() < 0.5) this.mask |= BOT_BUTTONS[this.prng.int(4, 6)]!;
      }
      this.mask &= this.safe;
      this.holdFor = this.mask === RetroPad.START ? this.prng.int(2, 6) : this.prng.int(4, 45);
    }
    this.input[0] = this.mask & 0xff;
    this.input[1] = this.mask >>> 8;
    return this.input;
  }
}

/**
 * Opens the game of `spec` with `ports` input ports. Without `--core`: the CHIP-8 core on `--rom`
 * (or `fallbackRom`). With `--core`: the libretro core resolved by name in Debian's folder, or a
 * path, on `--rom` (required); unless `probe` is false, the core first runs the ROM in a child
 * process ({@link probeCore}: a core that aborts or segfaults there is `BadCore`, and this process
 * never loads it), and a line about it goes to `io`'s stderr.
 * @throws CliError `Usage` (no ROM), `BadRom`, `BadCore`
 */
export async function openGame(
  spec: GameSpec,
  ports: number,
  fallbackRom?: URL,
  io?: CliIo,
  probe = true,
): Promise<Game> {
  if (spec.core === undefined) {
    const path = spec.rom ?? fallbackRom;
    if (path === undefined) throw new CliError(ExitCode.Usage, 'needs --rom FILE');
    const rom = await readRom(path);
    const name = spec.rom ?? (path === SPACE_RACER_URL ? 'Space Racer' : String(path));
    return chip8Game(rom, name, ports);
  }
  if (spec.rom === undefined) throw new CliError(ExitCode.Usage, `--core ${spec.core} needs --rom FILE`);
  const corePath = resolveCore(spec.core);
  const rom = await readLibretroRom(spec.rom);
  if (probe) {
    const report = await probeCore(corePath, spec.rom, ports);
    io?.err(
      `netplay: ${report.libraryName} ${report.libraryVersion.trim()} ran ${basename(spec.rom)} in a test process ` +
        `(state ${report.stateBytes} B, one-frame rollback ${report.reloadAgrees ? 'agrees' : 'DIFFERS'})\n`,
    );
  }
  return libretroGame(corePath, rom, spec.rom, ports);
}

/** The CHIP-8 game of `rom`. */
export function chip8Game(rom: Uint8Array, name: string, ports: number): Game {
  const core = makeCore(rom, name, { ports });
  const input = new Uint8Array(2);
  return {
    core,
    content: chip8Content(rom),
    title: core.title ?? name,
    kind: 'chip8',
    screen: () => drawScreen(core.framebuffer()),
    padInput(pad) {
      const p = pad & 0x3f;
      input[0] = p & 0xff;
      input[1] = p >>> 8;
      return input;
    },
    bot: (seed) => new RacerBot(seed),
    safeButtons: 0xffff,
    close: () => {},
  };
}

/** Resolves `--core`; a missing core or a bad name is `BadCore`. */
export function resolveCore(nameOrPath: string): string {
  try {
    return resolveLibretroCore(nameOrPath);
  } catch (e) {
    throw libretroFailure(e);
  }
}

/**
 * Loads `rom` on the libretro core at `corePath`. Content identity for the handshake: core id
 * `libretro:` + the core's library name, version its library version (trimmed), content hash
 * `hashContent` of the ROM bytes.
 */
export function libretroGame(corePath: string, rom: Uint8Array, romName: string, ports: number): Game {
  const screen = new LibretroScreen();
  let core: LibretroCore;
  try {
    core = LibretroCore.load({
      core: corePath,
      content: rom,
      contentName: basename(romName),
      ports,
      video: screen.sink,
    });
  } catch (e) {
    throw libretroFailure(e);
  }
  const safe = /nestopia/i.test(core.info.libraryName) ? 0xffff & ~NESTOPIA_UNSAFE : 0xffff;
  const input = new Uint8Array(2);
  return {
    core,
    content: {
      coreId: `libretro:${core.info.libraryName}`,
      coreVersion: core.info.libraryVersion.trim(),
      contentHash: hashContent(rom),
    },
    title: `${basename(romName)} on ${core.info.libraryName} ${core.info.libraryVersion.trim()}`,
    kind: 'libretro',
    screen: () => screen.text(),
    padInput(pad) {
      const mask = retroPadMask(pad);
      input[0] = mask & 0xff;
      input[1] = mask >>> 8;
      return input;
    },
    bot: (seed) => new RetroPadBot(seed, safe),
    safeButtons: safe,
    close: () => core.close(),
  };
}

/**
 * Runs the core on the ROM in a child process first (`probeLibretroCore`): a core that crashes or
 * refuses the content is a typed error, not a dead `netplay` process.
 */
export async function probeCore(corePath: string, romPath: string, ports: number): Promise<ProbeReport> {
  try {
    return await probeLibretroCore({ core: corePath, content: romPath, ports });
  } catch (e) {
    throw libretroFailure(e);
  }
}

/** Reads a ROM for a libretro core (no size limit past 64 MiB); unreadable or empty is `BadRom`. */
export async function readLibretroRom(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (e as Error).message;
    throw new CliError(ExitCode.BadRom, `cannot read ROM ${path}: ${why}`);
  }
  if (bytes.length === 0) throw new CliError(ExitCode.BadRom, `bad ROM ${path}: the file is empty`);
  if (bytes.length > 64 * 1024 * 1024)
    throw new CliError(ExitCode.BadRom, `bad ROM ${path}: ${bytes.length} bytes, more than 64 MiB`);
  return bytes;
}

/** A LibretroError as a CLI error: content problems are `BadRom`, the rest `BadCore`. */
export function libretroFailure(e: unknown): unknown {
  if (!(e instanceof LibretroError)) return e;
  const rom = e.code === 'missing-content' || e.code === 'content-rejected';
  const hint =
    e.code === 'missing-core' && !e.message.includes('setup-libretro')
      ? ' (Debian cores: apt-get install libretro-nestopia ...; in this repo: .ci/setup-libretro.sh)'
      : e.code === 'core-crashed'
        ? ' (seen in a test run of the core in a child process)'
        : '';
  return new CliError(rom ? ExitCode.BadRom : ExitCode.BadCore, `${e.message}${hint}`);
}
