import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { type LinkOptions, NetplayClient, type SessionError } from '@netplay/session';
import { type Clock, type Connection, systemClock } from '@netplay/transport';
import { FinalStates, formatFinals, LockstepFinals, writeFinalsFile } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { type Game, openGame } from '../game.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { joinLinks } from '../links.js';
import { lobbyUrl } from '../lobby.js';
import { directTarget, type JoinTarget, lobbyTargets, lookUpRoom, roomFoundLine } from '../lobby-join.js';
import { parseAddress, signalUrl, TRANSPORTS, type WebRtcTarget, webrtcRoom } from '../net.js';
import { Display, type InputSource, inputSource, PLAYER_KEYS, paceFrames } from '../play.js';
import { lockstepStatsLine, statsLine } from '../render.js';
import { SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';

/** Usage text of `netplay join`. */
export const JOIN_USAGE = `netplay join HOST:PORT [--rom FILE] [--core NAME|PATH] [--transport udp|ws] [--spectate] [--players N] [--nick NAME]
                [--password TEXT] [--bot] [--seconds N] [--finals FILE] [--listen-port N] [--no-links]
netplay join --transport webrtc --signal URL [--room NAME] [--ice URL] [same options]
netplay join --lobby URL ROOM [--direct] [same options]

Joins a game and plays from the keyboard (W/S/A/D or arrows, Space/J, K; Q quits), or watches it.
While the host waits for players it shows how many are in and missing; Q, Esc or Ctrl-C leaves
(exit 0; 130 for a Ctrl-C that arrives as SIGINT, e.g. with --bot or without a terminal).
  --rom FILE      the ROM the host runs (default: the embedded Space Racer)
  --core C        the libretro core the host runs (a name in Debian's libretro folder, or a path);
                  needs --rom. The game starts from the host's savestate (sent in SYNC)
  --transport T   udp (default), ws, or webrtc (no HOST:PORT: through the signaling server)
  --signal URL    webrtc: the host's signaling server (ws://HOST:PORT)
  --room NAME     webrtc: the host's room (default derived from the ROM, as the host's default)
  --ice URL       webrtc: a STUN/TURN server (repeatable)
  --lobby URL     join room ROOM of a lobby ("netplay rooms --lobby URL" lists them): the lobby tells
                  how (its signaling for a WebRTC room, its relay, or the host's addresses); no
                  --transport/--signal/--room; --players defaults to the room's slots
  --direct        with --lobby: connect to the host's own addresses, not through the lobby's relay
  --spectate      watch instead of taking a player slot
  --players N     the host's player count when it is not 2 (the core gets that many ports)
  --nick NAME     your nick (default "player"; the host renames duplicates)
  --password P    the session's password
  --bot           a bot plays instead of the keyboard
  --seconds N     leave after N seconds of play (default: until Q or Ctrl-C)
  --listen-port N rollback with 3+ players: the port (udp/ws) other players reach this join on for
                  direct links (default 0: a free one; webrtc: a second name in the room, no port).
                  When the host leaves, the players linked to each other play on under a new host
  --no-links      no direct links: every message to another player goes through the host
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
        signal: { type: 'string' },
        room: { type: 'string' },
        ice: { type: 'string', multiple: true },
        spectate: { type: 'boolean' },
        players: { type: 'string' },
        nick: { type: 'string' },
        password: { type: 'string' },
        bot: { type: 'boolean' },
        seconds: { type: 'string' },
        finals: { type: 'string' },
        lobby: { type: 'string' },
        direct: { type: 'boolean' },
        'listen-port': { type: 'string' },
        'no-links': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${JOIN_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.lobby !== undefined) return await joinLobbyRoom(values, positionals, io, deps);
  if (values.direct) throw new CliError(ExitCode.Usage, '--direct goes with --lobby URL ROOM');
  const transport = choiceOption('transport', values.transport, TRANSPORTS, 'udp');
  const signal = transport === 'webrtc' ? signalUrl(values.signal) : undefined;
  if (transport !== 'webrtc' && (values.signal !== undefined || values.room !== undefined))
    throw new CliError(ExitCode.Usage, '--signal and --room go with --transport webrtc');
  if (positionals.length !== (signal === undefined ? 1 : 0))
    throw new CliError(
      ExitCode.Usage,
      `${signal === undefined ? 'join needs one HOST:PORT' : 'join --transport webrtc takes no HOST:PORT (the host is found in its room)'}\n\n${JOIN_USAGE}`,
    );
  const { host: address, port } = signal === undefined ? parseAddress(positionals[0]!) : { host: '', port: 0 };
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
    io,
  );
  try {
    const webrtc: WebRtcTarget | undefined =
      signal === undefined
        ? undefined
        : {
            signal,
            room: webrtcRoom(values.room, game.content.contentHash),
            ...(values.ice !== undefined ? { ice: values.ice } : {}),
          };
    const listenPort = intOption('listen-port', values['listen-port'], 0, 0, 65535);
    const links =
      values['no-links'] === true || values.spectate === true
        ? undefined
        : joinLinks(transport, clock, listenPort, webrtc && { ...webrtc, nick: values.nick ?? 'player' });
    return await play(
      game,
      values,
      {
        targets: [directTarget(transport, address, port, clock, webrtc)],
        players,
        seconds,
        clock,
        finalsPath,
        links,
      },
      io,
      deps,
    );
  } finally {
    game.close();
  }
}

/** `netplay join --lobby URL ROOM`: looks the room up and joins it the way its join info says. */
async function joinLobbyRoom(
  values: JoinValues,
  positionals: string[],
  io: CliIo,
  deps: JoinDeps,
): Promise<ExitCodeValue> {
  const lobby = lobbyUrl(values.lobby);
  if (values.transport !== undefined || values.signal !== undefined || values.room !== undefined)
    throw new CliError(
      ExitCode.Usage,
      'join --lobby takes no --transport, --signal or --room: the lobby says how to reach the room',
    );
  if (positionals.length !== 1)
    throw new CliError(ExitCode.Usage, `join --lobby URL needs one ROOM id\n\n${JOIN_USAGE}`);
  const id = positionals[0]!;
  const seconds = values.seconds === undefined ? undefined : numberOption('seconds', values.seconds, 0, 0.1, 1e6);
  const clock = deps.clock ?? systemClock;
  const info = await lookUpRoom(lobby, id);
  const { room } = info;
  io.out(`${roomFoundLine(lobby, room)}\n`);
  if (values.spectate !== true && room.players >= room.slots)
    throw new CliError(
      ExitCode.Full,
      `room ${id} is full (${room.players}/${room.slots} players): pick another (netplay rooms --lobby ${lobby} --open) or --spectate`,
    );
  if (room.hasPassword && !values.password)
    throw new CliError(ExitCode.PasswordRefused, `room ${id} has a password: give it with --password`);
  const players = intOption('players', values.players, Math.max(1, Math.min(4, room.slots)), 1, 4);
  const romName = basename(values.rom ?? 'spaceracer.ch8');
  if (romName !== room.game)
    io.err(
      `join: room ${id} plays ${room.game} on ${room.core}; this join has ${romName}` +
        `${values.core !== undefined ? ` on ${values.core}` : ''} (the host checks the ROM's hash: pass --rom/--core if they differ)\n`,
    );
  const targets = lobbyTargets(info, {
    direct: values.direct === true,
    clock,
    ...(values.ice !== undefined ? { ice: values.ice } : {}),
  });
  const finalsPath = values.finals;
  if (finalsPath !== undefined) await writeFinalsFile(finalsPath, '');
  const game = await openGame(
    {
      ...(values.rom !== undefined ? { rom: values.rom } : {}),
      ...(values.core !== undefined ? { core: values.core } : {}),
    },
    players,
    SPACE_RACER_URL,
    io,
  );
  try {
    return await play(game, values, { targets, players, seconds, clock, finalsPath, links: undefined }, io, deps);
  } finally {
    game.close();
  }
}

/** The options of `join`. */
interface JoinValues {
  rom?: string;
  core?: string;
  transport?: string;
  signal?: string;
  room?: string;
  ice?: string[];
  spectate?: boolean;
  players?: string;
  nick?: string;
  password?: string;
  bot?: boolean;
  seconds?: string;
  finals?: string;
  lobby?: string;
  direct?: boolean;
  'listen-port'?: string;
  'no-links'?: boolean;
}

/**
 * Connects to the first target that answers: a target that fails with a network error is
 * reported and the next one tried; any other failure ends the join.
 */
async function connectFirst(
  targets: readonly JoinTarget[],
  nick: string,
  io: CliIo,
): Promise<{ conn: Connection; target: JoinTarget }> {
  for (let i = 0; ; i++) {
    const target = targets[i]!;
    try {
      return { conn: await target.connect(nick), target };
    } catch (e) {
      if (!(e instanceof CliError) || e.exitCode !== ExitCode.Network || i === targets.length - 1) throw e;
      io.err(`join: ${e.message}; trying ${targets[i + 1]!.label}\n`);
    }
  }
}

/** Connects and plays (the game is closed by the caller). */
async function play(
  game: Game,
  values: { spectate?: boolean; nick?: string; password?: string; bot?: boolean },
  where: {
    targets: readonly JoinTarget[];
    players: number;
    seconds: number | undefined;
    clock: Clock;
    finalsPath: string | undefined;
    /** Direct links to the other players (rollback, when the host chooses them). */
    links: LinkOptions | undefined;
  },
  io: CliIo,
  deps: JoinDeps,
): Promise<ExitCodeValue> {
  const { targets, players, seconds, clock, finalsPath } = where;
  const core = game.core;
  const nick = values.nick ?? 'player';
  // The keyboard is read from the start (raw mode), so Q and Ctrl-C work while the host waits for
  // players; a bot player reads no keyboard (Ctrl-C is then SIGINT, handled through io.signal).
  const keyboard =
    values.bot || deps.stdin === undefined ? undefined : inputSource({ stdin: deps.stdin }, clock, game.padInput);
  try {
    const { conn, target } = await connectFirst(targets, nick, io);
    const hostName = target.label;
    const client = new NetplayClient(conn, {
      core,
      content: game.content,
      clock,
      nick,
      spectate: values.spectate === true,
      ...(deps.protocolVersion !== undefined ? { protocolVersion: deps.protocolVersion } : {}),
      ...(values.password ? { password: values.password } : {}),
      ...(where.links !== undefined ? { links: where.links } : {}),
    });
    let waiting: { joined: number; players: number } | undefined;
    const offWaiting = client.on('waiting', (w) => {
      waiting = w;
      const missing = w.players - w.joined;
      io.out(
        `waiting for players at ${hostName}: ${w.joined} of ${w.players} in (the host, you` +
          `${w.joined > 2 ? ` and ${w.joined - 2} other${w.joined > 3 ? 's' : ''}` : ''}), ${missing} missing; ` +
          `${values.bot ? 'Ctrl-C' : 'Q or Ctrl-C'} to leave\n`,
      );
      if (w.players !== players)
        io.err(
          `join: the host has ${w.players} player slots but this join has --players ${players}: they must match ` +
            `(see --help); leave (Q or Ctrl-C) and join again with --players ${w.players}\n`,
        );
    });
    let info: Awaited<ReturnType<NetplayClient['joined']>> | undefined;
    try {
      info = await untilJoined(client, keyboard, io.signal, clock);
    } catch (e) {
      conn.close('closed: the client left');
      throw sessionFailure(e);
    } finally {
      offWaiting();
    }
    if (info === undefined) {
      client.close('closed: the client left while waiting for players');
      await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      io.out(
        `join: left before the game started${waiting ? ` (${waiting.joined} of ${waiting.players} players were in)` : ''}\n`,
      );
      return ExitCode.Ok;
    }
    return await playJoined(game, client, info, values, { hostName, seconds, clock, finalsPath, keyboard }, io, deps);
  } finally {
    keyboard?.close();
  }
}

/**
 * Resolves with the join info once the session runs, or undefined when the person quits (Q, Esc,
 * Ctrl-C on the keyboard, or `signal` aborted by SIGINT) while waiting; rejects with the session's
 * refusal.
 */
function untilJoined(
  client: NetplayClient,
  keyboard: InputSource | undefined,
  signal: AbortSignal | undefined,
  clock: Clock,
): Promise<Awaited<ReturnType<NetplayClient['joined']>> | undefined> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = () => {
      done = true;
      timer?.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      if (done) return;
      finish();
      resolve(undefined);
    };
    // The keyboard's quit flag is polled (it is set by stdin's data events).
    let timer: ReturnType<Clock['setTimer']> | undefined;
    const poll = () => {
      if (done) return;
      if (keyboard?.quit) {
        finish();
        resolve(undefined);
        return;
      }
      timer = clock.setTimer(50, poll);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    client.joined().then(
      (info) => {
        if (done) return;
        finish();
        resolve(info);
      },
      (e: unknown) => {
        if (done) return;
        finish();
        reject(e);
      },
    );
    if (signal?.aborted) onAbort();
    else poll();
  });
}

/** Plays once joined (the keyboard is closed by the caller). */
async function playJoined(
  game: Game,
  client: NetplayClient,
  info: Awaited<ReturnType<NetplayClient['joined']>>,
  values: { bot?: boolean },
  where: {
    hostName: string;
    seconds: number | undefined;
    clock: Clock;
    finalsPath: string | undefined;
    keyboard: InputSource | undefined;
  },
  io: CliIo,
  deps: JoinDeps,
): Promise<ExitCodeValue> {
  const { hostName, seconds, clock, finalsPath, keyboard } = where;
  const core = game.core;
  const spectator = info.slot === undefined;
  const role = spectator ? 'a spectator' : `P${info.slot! + 1}`;
  io.out(`joined ${hostName} as ${info.nick} (${role}), ${info.mode}, host ${info.hostNick}\n`);
  const finals = new FinalStates(info.nick);
  // Lockstep: a frame's state is recorded when it runs and kept once the session says it is final.
  const lockstepFinals = new LockstepFinals(finals, core);
  client.on('frame', ({ frame }) => lockstepFinals.ran(frame));
  client.on('final', ({ frame }) => lockstepFinals.final(frame));
  // A spectator's keyboard only quits: its pad is never sent.
  const input =
    !spectator && values.bot ? inputSource({ bot: game.bot(2 + info.slot!) }, clock, game.padInput) : keyboard;
  const display = new Display(io, {
    title: `netplay join: ${game.title} at ${hostName} as ${info.nick} (${role})`,
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
    keys: spectator
      ? `you are a spectator (no player keys): ${keyboard ? 'Q or Ctrl-C' : 'Ctrl-C'} to leave`
      : values.bot
        ? `a bot plays ${role}: Ctrl-C to leave`
        : PLAYER_KEYS,
  });
  let lost: SessionError | undefined;
  const offClosed = client.on('closed', ({ error }) => {
    lost = error;
  });
  // Rollback with direct links: the game goes on under the host the players elect.
  let leftHost = info.hostNick;
  client.on('host-left', ({ nick, frame }) => {
    leftHost = nick;
    display.event(`host left: ${nick} is gone at frame ${frame}; the players choose a new host`);
  });
  client.on('host-changed', ({ nick, self, frame }) => {
    display.event(
      `host left: ${self ? `you (${nick}) are` : `${nick} is`} the new host from frame ${frame} (was ${leftHost})`,
    );
  });
  const start = clock.now();
  try {
    await paceFrames(clock, io.signal, (now) => {
      if (lost !== undefined || keyboard?.quit) return false;
      if (seconds !== undefined && now - start >= seconds * 1000) return false;
      if (spectator) client.tick();
      else client.tick(input ? input.next(now) : undefined);
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
