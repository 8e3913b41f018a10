import { parseArgs } from 'node:util';
import { NetplayHost, SESSION_MODES, type SessionError, type SessionMode } from '@netplay/session';
import { type Clock, systemClock } from '@netplay/transport';
import { FinalStates, formatFinals, LockstepFinals, writeFinalsFile } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { openGame } from '../game.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { DEFAULT_PORT, listenerSlots, listenSession, MAX_SPECTATORS, TRANSPORTS } from '../net.js';
import { Display, inputSource, paceFrames } from '../play.js';
import { lockstepStatsLine, statsLine } from '../render.js';
import { sessionFailure } from '../session-errors.js';

/** Usage text of `netplay host`. */
export const HOST_USAGE = `netplay host --rom FILE [--core NAME|PATH] [--port N] [--bind ADDRESS] [--transport udp|ws] [--mode M]
                [--players N] [--password TEXT] [--delay N] [--nick NAME] [--bot] [--seconds N] [--finals FILE]

Hosts a game of the ROM and plays player 1 from the keyboard (W/S/A/D or arrows, Space/J, K; Q quits).
Others join with "netplay join HOST:PORT" (the same ROM), spectators with --spectate.
  --core C        a libretro core instead of CHIP-8: a name in Debian's libretro folder
                  (nestopia → /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so) or a path;
                  --rom is then the core's content (e.g. /usr/share/nes/efp.nes)
  --port N        port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --bind ADDRESS  address to listen on (default 0.0.0.0: reachable by others; 127.0.0.1: this machine only)
  --transport T   udp (default) or ws (WebSocket, for browsers)
  --mode M        rollback (default), lockstep-cs (FCE Ultra client-server), lockstep-p2p (MAMEHub mesh)
                  or frame-advance (FS-UAE); the P2P modes run through this host, which relays
  --players N     player slots including the host (default 2; the game starts when all are in,
                  except in lockstep-cs, where it starts with the first and others join late)
  --password P    password joiners must give (sent as a salted SHA-256 proof, never in clear)
  --delay N       frames of input delay (default 0)
  --nick NAME     the host's nick (default "host")
  --bot           a bot plays instead of the keyboard
  --seconds N     stop after N seconds (default: until Q or Ctrl-C)
  --finals FILE   at the end, write the CRC-32 of the state of each final frame to FILE (the format
                  of "netplay join --finals"), to compare with the joiners'`;

/** In-process hooks for tests. */
export interface HostDeps {
  readonly clock?: Clock;
  /** Keyboard (default: none; main.ts passes process.stdin). */
  readonly stdin?: RawInput;
  /** Called once the host listens, with the port. */
  readonly onListening?: (port: number) => void;
  /** Called once the host listens, with the session host (tests read its frame). */
  readonly onHost?: (host: NetplayHost) => void;
  /** Receives the host's final-state hashes at the end. */
  readonly onFinals?: (finals: FinalStates) => void;
}

/** Ports of the host's core: the player count, at least 2 and at most 4 (as the CHIP-8 core takes). */
function game4(players: number): number {
  return Math.max(2, Math.min(4, players));
}

/** `netplay host`. */
export async function hostCommand(argv: string[], io: CliIo, deps: HostDeps = {}): Promise<ExitCodeValue> {
  const { values } = usageErrors(() =>
    parseArgs({
      args: argv,
      options: {
        rom: { type: 'string' },
        core: { type: 'string' },
        port: { type: 'string' },
        bind: { type: 'string' },
        transport: { type: 'string' },
        mode: { type: 'string' },
        players: { type: 'string' },
        password: { type: 'string' },
        delay: { type: 'string' },
        nick: { type: 'string' },
        bot: { type: 'boolean' },
        seconds: { type: 'string' },
        finals: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${HOST_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.rom === undefined) throw new CliError(ExitCode.Usage, `host needs --rom FILE\n\n${HOST_USAGE}`);
  const port = intOption('port', values.port, DEFAULT_PORT, 0, 65535);
  const transport = choiceOption('transport', values.transport, TRANSPORTS, 'udp');
  const mode: SessionMode = choiceOption('mode', values.mode, SESSION_MODES, 'rollback');
  const players = intOption('players', values.players, 2, 2, 16);
  const delay = intOption('delay', values.delay, 0, 0, 30);
  const seconds = values.seconds === undefined ? undefined : numberOption('seconds', values.seconds, 0, 0.1, 1e6);
  const bind = values.bind ?? '0.0.0.0';
  const clock = deps.clock ?? systemClock;
  const finalsPath = values.finals;
  // Created (or emptied) before the game, so an unwritable path fails first.
  if (finalsPath !== undefined) await writeFinalsFile(finalsPath, '');

  const game = await openGame(
    { rom: values.rom, ...(values.core !== undefined ? { core: values.core } : {}) },
    game4(players),
  );
  const core = game.core;
  let host: NetplayHost;
  try {
    host = new NetplayHost({
      core,
      content: game.content,
      clock,
      mode,
      players,
      maxSpectators: MAX_SPECTATORS,
      inputDelay: delay,
      ...(values.nick !== undefined ? { nick: values.nick } : {}),
      ...(values.password ? { password: values.password } : {}),
    });
  } catch (e) {
    game.close();
    throw sessionFailure(e);
  }
  let bound: Awaited<ReturnType<typeof listenSession>>;
  try {
    bound = await listenSession(transport, bind, port, clock, listenerSlots(players));
  } catch (e) {
    game.close();
    throw e;
  }
  const finals = new FinalStates(host.nick);
  // Lockstep: a frame's state is recorded when it runs and kept once the session says it is final.
  const lockstepFinals = new LockstepFinals(finals, core);
  host.on('frame', ({ frame }) => lockstepFinals.ran(frame));
  host.on('final', ({ frame }) => lockstepFinals.final(frame));
  const input = inputSource(
    values.bot ? { bot: game.bot(1) } : deps.stdin ? { stdin: deps.stdin } : {},
    clock,
    game.padInput,
  );
  const display = new Display(io, {
    title: `netplay host: ${game.title} on ${transport} ${bind}:${bound.port}, ${mode}, ${players} players`,
    screen: () => (host.started ? game.screen() : undefined),
    stats: () => {
      const s = host.rollback;
      const lockstep = host.lockstepReport();
      if (s !== undefined) return [statsLine(host.nick, s, 0)];
      if (lockstep !== undefined) return [lockstepStatsLine(host.nick, lockstep, 0)];
      return [`${host.nick} waiting for players (${host.peerList().length} connected)`];
    },
  });
  host.on('peer-joined', ({ nick, slot }) =>
    display.event(`${nick} joined ${slot === undefined ? 'as a spectator' : `as P${slot + 1}`}`),
  );
  host.on('peer-refused', ({ nick, remoteAddress, error }) =>
    display.event(`refused ${nick ?? remoteAddress}: ${error.code}: ${error.message}`),
  );
  host.on('peer-left', ({ nick, slot, reason }) =>
    display.event(
      `${nick} left${slot === undefined ? '' : ` (P${slot + 1}; the game goes on without it)`}: ${reason || 'connection closed'}`,
    ),
  );
  host.on('started', ({ frame }) => display.event(`all players are in: the game starts at frame ${frame}`));
  let ended: SessionError | undefined;
  host.on('ended', ({ error }) => {
    ended = error;
    display.event(`the game ended: ${error.message}`);
  });
  io.out(
    `hosting on ${transport} ${bind}:${bound.port}: join with ` +
      `"netplay join HOST:${bound.port}${transport === 'ws' ? ' --transport ws' : ''}` +
      `${values.core !== undefined ? ` --core ${values.core}` : ''} --rom ${values.rom}"\n`,
  );
  deps.onHost?.(host);
  deps.onListening?.(bound.port);
  const off = host.listen(bound.listener);
  const start = clock.now();
  try {
    await paceFrames(clock, io.signal, (now) => {
      if (input.quit || ended !== undefined) return false;
      if (seconds !== undefined && now - start >= seconds * 1000) return false;
      host.tick(input.next(now));
      const s = host.rollback;
      const d = host.driver;
      if (s !== undefined && d !== undefined)
        finals.record(Math.min(s.confirmedFrame, s.currentFrame), (f) => d.stateOf(f));
      display.frame(now);
      return true;
    });
  } finally {
    input.close();
    off();
    host.close('closed: the host left');
    // Let the close reach the peers before the socket goes.
    await new Promise<void>((resolve) => clock.setTimer(100, resolve));
    bound.listener.close('closed: the host left');
  }
  display.final();
  io.out(`host: stopped at frame ${host.frame}\n`);
  game.close();
  if (finalsPath !== undefined) {
    await writeFinalsFile(finalsPath, formatFinals(finals));
    io.out(`host: wrote the state hashes of ${finals.hashes.size} final frames to ${finalsPath}\n`);
  }
  deps.onFinals?.(finals);
  if (ended !== undefined) throw sessionFailure(ended, true);
  return ExitCode.Ok;
}
