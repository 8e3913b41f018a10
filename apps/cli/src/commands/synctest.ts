import { parseArgs } from 'node:util';
import { CoreDriver, RollbackError, SyncTestSession } from '@netplay/rollback';
import type { Core } from '@netplay/state';
import { Prng } from '@netplay/transport';
import { intOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { libretroGame, probeCore, readLibretroRom, resolveCore } from '../game.js';
import type { CliIo } from '../io.js';
import { makeCore, readRom } from '../rom.js';

/** Usage text of `netplay synctest`. */
export const SYNCTEST_USAGE = `netplay synctest --rom FILE [--core NAME|PATH [--all-buttons]] [--frames N] [--check-distance N]
                 [--players N] [--seed N]

Runs the ROM under SyncTest: every frame is simulated, then the state N frames back is loaded
and the frames are simulated again; any checksum difference is a desync (non-determinism in the
core or its savestates). Inputs are seeded pseudo-random key presses on every player's port.
  --frames N          frames to run (default 600)
  --check-distance N  frames rolled back every frame, 1..60 (default 2)
  --players N         ports driven, 1..4 (default 2)
  --seed N            seed of the inputs (default 1)
  --core C            check a libretro core (a name in Debian's libretro folder, or a path) on the
                      ROM: the core is first run in a child process (a crash there is exit 12, not a
                      dead netplay), then SyncTest runs on its RetroPad input
  --all-buttons       also press the buttons known to break rollback on this core (Nestopia: X/Y,
                      turbo A/B, whose counter is outside the savestate); default: they stay up`;

/** In-process hooks for tests. */
export interface SyncTestDeps {
  /** Makes the core from the ROM's bytes (default: the CHIP-8 core). */
  readonly makeCore?: (rom: Uint8Array, players: number) => Core;
}

/** `netplay synctest`. Returns the exit code (desync: `CheckFailed`). */
export async function synctestCommand(argv: string[], io: CliIo, deps: SyncTestDeps = {}): Promise<ExitCodeValue> {
  const { values } = usageErrors(() =>
    parseArgs({
      args: argv,
      options: {
        rom: { type: 'string' },
        core: { type: 'string' },
        'all-buttons': { type: 'boolean' },
        frames: { type: 'string' },
        'check-distance': { type: 'string' },
        players: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${SYNCTEST_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.rom === undefined) throw new CliError(ExitCode.Usage, `synctest needs --rom FILE\n\n${SYNCTEST_USAGE}`);
  const frames = intOption('frames', values.frames, 600, 1, 10_000_000);
  const distance = intOption('check-distance', values['check-distance'], 2, 1, 60);
  const players = intOption('players', values.players, 2, 1, 4);
  const seed = intOption('seed', values.seed, 1, 0, 2 ** 32 - 1);

  let core: Core;
  let buttons = 0xffff;
  let close = () => {};
  if (values.core !== undefined) {
    const corePath = resolveCore(values.core);
    const rom = await readLibretroRom(values.rom);
    const report = await probeCore(corePath, values.rom, players);
    io.err(
      `synctest: ${report.libraryName} ${report.libraryVersion.trim()}: state ${report.stateBytes} B, ` +
        `one-frame rollback ${report.reloadAgrees ? 'agrees' : 'DIFFERS'} in a test run\n`,
    );
    const game = libretroGame(corePath, rom, values.rom, players);
    core = game.core;
    close = game.close;
    if (values['all-buttons'] !== true) buttons = game.safeButtons;
    if (buttons !== 0xffff)
      io.err(`synctest: buttons 0x${(~buttons & 0xffff).toString(16)} stay up (see --all-buttons)\n`);
  } else {
    const rom = await readRom(values.rom);
    core = deps.makeCore ? deps.makeCore(rom, players) : makeCore(rom, values.rom, { ports: players });
  }
  let result: SyncTestResult;
  try {
    result = runSyncTest(core, { frames, checkDistance: distance, seed, buttons }, (frame) => {
      const text = `synctest: frame ${frame} / ${frames}`;
      io.err(io.live ? `\r${text}` : `${text}\n`);
    });
  } finally {
    close();
  }
  if (io.live) io.err('\n');
  if (result.desyncFrame !== undefined) {
    io.err(`synctest: DESYNC at frame ${result.desyncFrame}: ${result.message}\n`);
    return ExitCode.CheckFailed;
  }
  io.out(
    `synctest: OK, ${frames} frames, check distance ${distance}, ${result.resimulated} frames resimulated, no desync\n`,
  );
  return ExitCode.Ok;
}

/** What {@link runSyncTest} found. */
export interface SyncTestResult {
  /** The first frame whose state differed after resimulation, if any. */
  readonly desyncFrame?: number;
  readonly message?: string;
  /** Frames simulated again. */
  readonly resimulated: number;
}

/**
 * Runs SyncTest on `core` for `frames` frames with seeded inputs (each port holds a random key
 * set for a random 1–30 frames). Calls `progress` about ten times on runs of 1000 frames or more.
 */
export function runSyncTest(
  core: Core,
  options: {
    readonly frames: number;
    readonly checkDistance: number;
    readonly seed: number;
    /** Bits of each port's input (16-bit little-endian) the inputs may set; default all. */
    readonly buttons?: number;
  },
  progress?: (frame: number) => void,
): SyncTestResult {
  const players = core.ports;
  const session = new SyncTestSession({ players, inputBytes: core.inputBytes, checkDistance: options.checkDistance });
  const driver = new CoreDriver(core, session.ringFrames);
  const prng = new Prng(options.seed);
  const inputs = Array.from({ length: players }, () => new Uint8Array(core.inputBytes));
  const hold = new Int32Array(players);
  const buttons = options.buttons ?? 0xffff;
  const step = options.frames >= 1000 ? Math.ceil(options.frames / 10) : 0;
  try {
    for (let f = 0; f < options.frames; f++) {
      for (let p = 0; p < players; p++) {
        const input = inputs[p]!;
        if (hold[p]!-- <= 0) {
          // Mostly one key (or none), sometimes several: games react to single presses.
          input.fill(0);
          const r = prng.nextFloat();
          if (r < 0.6) {
            const bit = prng.int(0, input.length * 8);
            input[bit >> 3]! |= 1 << (bit & 7);
          } else if (r < 0.8) {
            for (let i = 0; i < input.length; i++) input[i] = prng.int(0, 256);
          }
          input[0]! &= buttons & 0xff;
          if (input.length > 1) input[1]! &= buttons >>> 8;
          hold[p] = prng.int(1, 31);
        }
        session.addLocalInput(p, input);
      }
      driver.run(session.advanceFrame(), session);
      if (step > 0 && (f + 1) % step === 0) progress?.(f + 1);
    }
  } catch (e) {
    if (e instanceof RollbackError && e.code === 'desync')
      return { desyncFrame: e.frame ?? -1, message: e.message, resimulated: session.stats.resimulatedFrames };
    throw e;
  }
  return { resimulated: session.stats.resimulatedFrames };
}
