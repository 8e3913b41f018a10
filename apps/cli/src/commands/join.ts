import { parseArgs } from 'node:util';
import { NetplayClient, type SessionError } from '@netplay/session';
import { type Clock, systemClock } from '@netplay/transport';
import { FinalStates, formatFinals, LockstepFinals, writeFinalsFile } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { type Game, openGame } from '../game.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { connectSession, parseAddress, TRANSPORTS, type TransportName } from '../net.js';
import { Display, inputSource, paceFrames } from '../play.js';
import { lockstepStatsLine, statsLine } from '../render.js';
import { SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';

/** Usage text of `netplay join`. */
export const JOIN_USAGE = `netplay join HOST:PORT [--rom FILE] [--core NAME|PATH] [--transport udp|ws] [--spectate] [--players N] [--nick NAME]
                [--password TEXT] [--bot] [--seconds N] [--finals FILE]

Joins a game and plays from the keyboard (W/S/A/D or arrows, Space/J, K; Q quits), or watches it.
  --rom FILE      the ROM the host runs (default: the embedded Space Racer)
  --core C        the libretro core the host runs (a name in Debian's libretro folder, or a path);
                  needs --rom. The game starts from the host's savestate (sent in SYNC)
  --transport T   udp (default) or ws
  --spectate      watch instead of taking a player slot
  --players N     the host's player count when it is not 2 (the core gets that many ports)
  --nick NAME     your nick (default "player"; the host renames duplicates)
  --password P    the session's password
  --bot           a bot plays instead of the keyboard
  --seconds N     leave after N seconds of play (default: until Q or Ctrl-C)
  --finals FILE   at the end, write the CRC-32 of the state of each final frame to FILE: lines
                  "FRAME CRC32" (decimal frame, 8 hex digits), ascending; lines starting with # are
                  comments. Written also when the host is lost; left empty when the join is refused.`;

/** In-process hooks for tests. */
export interface JoinDeps {
  readonly clock?: Clock;
  readonly stdin?: RawInput;
  /** Receives this peer's final-state hashes at the end. */
  readonly onFinals?: (finals: FinalStates) => void;
  /** Test hook: the session protocol version announced (default the session package's). */
  readonly protocolVersion?: number;
}

/** `netplay join`. */
export async function joinCommand(argv: string[], io: CliIo, deps: JoinDeps = {}): Promise<ExitCodeValue> {
  const { values, positionals } = usageErrors(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        rom: { type: 'string' },
        core: { type: 'string' },
        transport: { type: 'string' },
        spectate: { type: 'boolean' },
        players: { type: 'string' },
        nick: { type: 'string' },
        password: { type: 'string' },
        bot: { type: 'boolean' },
        seconds: { type: 'string' },
        finals: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${JOIN_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (positionals.length !== 1) throw new CliError(ExitCode.Usage, `join needs one HOST:PORT\n\n${JOIN_USAGE}`);
  const { host: address, port } = parseAddress(positionals[0]!);
  const transport = choiceOption('transport', values.transport, TRANSPORTS, 'udp');
  const players = intOption('players', values.players, 2, 1, 4);
  const seconds = values.seconds === undefined ? undefined : numberOption('seconds', values.seconds, 0, 0.1, 1e6);
  const clock = deps.clock ?? systemClock;
  const finalsPath = values.finals;
  // Created (or emptied) before connecting, so an unwritable path fails before the game.
  if (finalsPath !== undefined) await writeFinalsFile(finalsPath, '');
  // The core needs at least as many ports as the session has players (the session checks it), and
  // the lockstep runner drives exactly `players` ports, so the count must match the host's.
  const game = await openGame(
    {
      ...(values.rom !== undefined ? { rom: values.rom } : {}),
      ...(values.core !== undefined ? { core: values.core } : {}),
    },
    players,
    SPACE_RACER_URL,
  );
  try {
    return await play(game, values, { address, port, transport, seconds, clock, finalsPath }, io, deps);
  } finally {
    game.close();
  }
}

/** Connects and plays (the game is closed by the caller). */
async function play(
  game: Game,
  values: { spectate?: boolean; nick?: string; password?: string; bot?: boolean },
  where: {
    address: string;
    port: number;
    transport: TransportName;
    seconds: number | undefined;
    clock: Clock;
    finalsPath: string | undefined;
  },
  io: CliIo,
  deps: JoinDeps,
): Promise<ExitCodeValue> {
  const { address, port, transport, seconds, clock, finalsPath } = where;
  const core = game.core;
  const conn = await connectSession(transport, address, port, clock);
  const client = new NetplayClient(conn, {
    core,
    content: game.content,
    clock,
    nick: values.nick ?? 'player',
    spectate: values.spectate === true,
    ...(deps.protocolVersion !== undefined ? { protocolVersion: deps.protocolVersion } : {}),
    ...(values.password ? { password: values.password } : {}),
  });
  let info: Awaited<ReturnType<NetplayClient['joined']>>;
  try {
    info = await client.joined();
  } catch (e) {
    conn.close('closed: the client left');
    throw sessionFailure(e);
  }
  const role = info.slot === undefined ? 'a spectator' : `P${info.slot + 1}`;
  io.out(`joined ${address}:${port} as ${info.nick} (${role}), ${info.mode}, host ${info.hostNick}\n`);
  const finals = new FinalStates(info.nick);
  // Lockstep: a frame's state is recorded when it runs and kept once the session says it is final.
  const lockstepFinals = new LockstepFinals(finals, core);
  client.on('frame', ({ frame }) => lockstepFinals.ran(frame));
  client.on('final', ({ frame }) => lockstepFinals.final(frame));
  const input = inputSource(
    info.slot === undefined
      ? {}
      : values.bot
        ? { bot: game.bot(2 + info.slot) }
        : deps.stdin
          ? { stdin: deps.stdin }
          : {},
    clock,
    game.padInput,
  );
  const display = new Display(io, {
    title: `netplay join: ${game.title} at ${address}:${port} as ${info.nick} (${role})`,
    screen: () => game.screen(),
    stats: () => {
      const s = client.rollback;
      if (s !== undefined) return [statsLine(info.nick, s, info.slot)];
      const lockstep = client.lockstepReport();
      if (lockstep !== undefined) return [lockstepStatsLine(info.nick, lockstep, info.slot)];
      return [
        `${info.nick.padEnd(10)}    frame ${String(client.frame ?? '-').padStart(5)}  (spectating: confirmed inputs only)`,
      ];
    },
  });
  let lost: SessionError | undefined;
  const offClosed = client.on('closed', ({ error }) => {
    lost = error;
  });
  const start = clock.now();
  try {
    await paceFrames(clock, io.signal, (now) => {
      if (lost !== undefined || input.quit) return false;
      if (seconds !== undefined && now - start >= seconds * 1000) return false;
      client.tick(input.next(now));
      const d = client.driver;
      const s = client.rollback;
      if (client.lockstep === undefined && d !== undefined) {
        if (s !== undefined) finals.record(Math.min(s.confirmedFrame, s.currentFrame), (f) => d.stateOf(f));
        else if (client.frame !== undefined) finals.record(client.frame, (f) => d.stateOf(f));
      }
      display.frame(now);
      return true;
    });
  } finally {
    input.close();
    offClosed();
    if (lost === undefined) {
      client.close('closed: the client left');
      await new Promise<void>((resolve) => clock.setTimer(100, resolve));
    }
  }
  display.final();
  deps.onFinals?.(finals);
  if (finalsPath !== undefined) {
    await writeFinalsFile(finalsPath, formatFinals(finals));
    io.out(`join: wrote the state hashes of ${finals.hashes.size} final frames to ${finalsPath}\n`);
  }
  if (lost !== undefined) throw sessionFailure(lost, true);
  io.out(`join: left at frame ${client.frame ?? '-'}\n`);
  return ExitCode.Ok;
}
