import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type JoinInfo,
  type LinkOptions,
  NetplayClient,
  type NetplayClientOptions,
  type RejoinTarget,
  type SessionError,
} from '@netplay/session';
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
import { DEFAULT_REJOIN_SECONDS, isConnectionLoss, REJOIN_INTERVAL_MS, RejoinTargets, rejoinLoop } from '../rejoin.js';
import { lockstepStatsLine, statsLine } from '../render.js';
import { SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';

/** Usage text of `netplay join`. */
export const JOIN_USAGE = `netplay join HOST:PORT [--rom FILE] [--core NAME|PATH] [--transport udp|ws] [--spectate] [--players N] [--nick NAME]
                [--password TEXT] [--bot] [--seconds N] [--finals FILE] [--listen-port N] [--no-links] [--rejoin-seconds N]
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
  --rejoin-seconds N  after a hand-over, when this join's own connection drops, how long it tries
                  to get back in at the new host (every second; default ${DEFAULT_REJOIN_SECONDS}; 0: never)
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
  /** Test hook: how a join coming back after a hand-over dials the new host (default the links' `connect`). */
  readonly rejoinConnect?: (address: string) => Promise<Connection> | Connection;
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
        'rejoin-seconds': { type: 'string' },
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
  'rejoin-seconds'?: string;
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
  values: { spectate?: boolean; nick?: string; password?: string; bot?: boolean; 'rejoin-seconds'?: string },
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
  const rejoinSeconds = numberOption('rejoin-seconds', values['rejoin-seconds'], DEFAULT_REJOIN_SECONDS, 0, 3600);
  // The keyboard is read from the start (raw mode), so Q and Ctrl-C work while the host waits for
  // players; a bot player reads no keyboard (Ctrl-C is then SIGINT, handled through io.signal).
  const keyboard =
    values.bot || deps.stdin === undefined ? undefined : inputSource({ stdin: deps.stdin }, clock, game.padInput);
  try {
    const { conn, target } = await connectFirst(targets, nick, io);
    const hostName = target.label;
    const options: NetplayClientOptions = {
      core,
      content: game.content,
      clock,
      nick,
      spectate: values.spectate === true,
      ...(deps.protocolVersion !== undefined ? { protocolVersion: deps.protocolVersion } : {}),
      ...(values.password ? { password: values.password } : {}),
      ...(where.links !== undefined ? { links: where.links } : {}),
    };
    const client = new NetplayClient(conn, options);
    // After a hand-over: back in at the new host's link listener, with the same options and the
    // slot's token (only players with links follow a hand-over).
    const links = where.links;
    const comeBack =
      links === undefined || rejoinSeconds === 0
        ? undefined
        : {
            windowMs: rejoinSeconds * 1000,
            async attempt(target: RejoinTarget): Promise<{ client: NetplayClient; info: JoinInfo }> {
              const conn = await (deps.rejoinConnect ?? links.connect)(target.address);
              const c = new NetplayClient(conn, { ...options, rejoin: target });
              try {
                return { client: c, info: await c.joined() };
              } catch (e) {
                conn.close('closed: the client left');
                throw e;
              }
            },
          };
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
    return await playJoined(
      game,
      client,
      info,
      values,
      { hostName, seconds, clock, finalsPath, keyboard, comeBack },
      io,
      deps,
    );
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

/** How `join` comes back after a hand-over (see {@link playJoined}). */
interface ComeBack {
  readonly windowMs: number;
  attempt(target: RejoinTarget): Promise<{ client: NetplayClient; info: JoinInfo }>;
}

/**
 * Plays once joined (the keyboard is closed by the caller). After a hand-over, a connection loss
 * with a `rejoinTarget` is followed by attempts to get back in (`comeBack`); the finals go on in
 * one record (the new incarnation's from its entry frame), the `--seconds` from the first start.
 */
async function playJoined(
  game: Game,
  firstClient: NetplayClient,
  firstInfo: JoinInfo,
  values: { bot?: boolean },
  where: {
    hostName: string;
    seconds: number | undefined;
    clock: Clock;
    finalsPath: string | undefined;
    keyboard: InputSource | undefined;
    comeBack: ComeBack | undefined;
  },
  io: CliIo,
  deps: JoinDeps,
): Promise<ExitCodeValue> {
  const { hostName, seconds, clock, finalsPath, keyboard, comeBack } = where;
  let client = firstClient;
  let info = firstInfo;
  const core = game.core;
  const spectator = info.slot === undefined;
  const role = spectator ? 'a spectator' : `P${info.slot! + 1}`;
  io.out(`joined ${hostName} as ${info.nick} (${role}), ${info.mode}, host ${info.hostNick}\n`);
  const finals = new FinalStates(info.nick);
  // Lockstep: a frame's state is recorded when it runs and kept once the session says it is final.
  const lockstepFinals = new LockstepFinals(finals, core);
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
  // Where to come back after a hand-over to another player (kept: the session may forget it at its
  // end, and a player cut off alone names itself host before it ends).
  const targets = new RejoinTargets();
  const attach = (c: NetplayClient, hostNick: string): (() => void) => {
    // Rollback with direct links: the game goes on under the host the players elect.
    let leftHost = hostNick;
    const offs = [
      c.on('frame', ({ frame }) => lockstepFinals.ran(frame)),
      c.on('final', ({ frame }) => lockstepFinals.final(frame)),
      c.on('closed', ({ error }) => {
        targets.note(c.rejoinTarget);
        lost = error;
      }),
      c.on('host-left', ({ nick, frame }) => {
        leftHost = nick;
        display.event(`host left: ${nick} is gone at frame ${frame}; the players choose a new host`);
      }),
      c.on('host-changed', ({ nick, self, frame }) => {
        // A player cut off from the others may elect itself (or another) alone before it ends
        // (`partitioned`): every host followed stays a candidate (see RejoinTargets).
        if (!self) targets.note(c.rejoinTarget);
        display.event(
          `host left: ${self ? `you (${nick}) are` : `${nick} is`} the new host from frame ${frame} (was ${leftHost})`,
        );
      }),
    ];
    return () => {
      for (const off of offs) off();
    };
  };
  const start = clock.now();
  const timeUp = (now: number) => seconds !== undefined && now - start >= seconds * 1000;
  for (;;) {
    const detach = attach(client, info.hostNick);
    // A rejoined client came with its target and keeps it (it can come back again).
    if (client !== firstClient) targets.note(client.rejoinTarget);
    try {
      await paceFrames(clock, io.signal, (now) => {
        if (lost !== undefined || keyboard?.quit) return false;
        if (timeUp(now)) return false;
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
      detach();
      if (lost === undefined) {
        client.close('closed: the client left');
        await new Promise<void>((resolve) => clock.setTimer(100, resolve));
      }
    }
    const quit = () => keyboard?.quit === true || io.signal?.aborted === true || timeUp(clock.now());
    const where = targets.all.filter((t) => t.address !== '');
    const back = where[0];
    if (comeBack === undefined || back === undefined || lost === undefined || !isConnectionLoss(lost) || quit()) break;
    const others = where.slice(1).map((t) => `${t.host} at ${t.address}`);
    io.out(
      `lost the connection to the game (${lost.message}); rejoining ${back.host} at ${back.address} as P${back.slot + 1}` +
        `${others.length > 0 ? ` (else ${others.join(', ')})` : ''}…\n`,
    );
    try {
      ({
        value: { client, info },
      } = await rejoinLoop({
        targets: where,
        attempt: (t) => comeBack.attempt(t),
        clock,
        windowMs: comeBack.windowMs,
        intervalMs: REJOIN_INTERVAL_MS,
        say: (line) => io.out(`${line}\n`),
        quit,
      }));
    } catch (e) {
      await endGame(finals, finalsPath, io, deps, display);
      throw e;
    }
    lost = undefined;
    io.out(`back in the game as P${info.slot! + 1} at frame ${info.frame}, host ${info.hostNick}\n`);
  }
  await endGame(finals, finalsPath, io, deps, display);
  if (lost !== undefined) throw sessionFailure(lost, true);
  io.out(`join: left at frame ${client.frame ?? '-'}\n`);
  return ExitCode.Ok;
}

/** The end of a join's game: the last stats, the finals hook and file. */
async function endGame(
  finals: FinalStates,
  finalsPath: string | undefined,
  io: CliIo,
  deps: JoinDeps,
  display: Display,
): Promise<void> {
  display.final();
  deps.onFinals?.(finals);
  if (finalsPath !== undefined) {
    await writeFinalsFile(finalsPath, formatFinals(finals));
    io.out(`join: wrote the state hashes of ${finals.hashes.size} final frames to ${finalsPath}\n`);
  }
}
