import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { NetplayHost, SESSION_MODES, type SessionError, type SessionMode } from '@netplay/session';
import { type Clock, systemClock } from '@netplay/transport';
import { friendLines, hostPort, type Interfaces } from '../addresses.js';
import { FinalStates, formatFinals, LockstepFinals, writeFinalsFile } from '../agreement.js';
import { choiceOption, intOption, numberOption, usageErrors } from '../args.js';
import { CliError, ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { openGame } from '../game.js';
import type { CliIo } from '../io.js';
import type { RawInput } from '../keyboard.js';
import { lobbyUrl } from '../lobby.js';
import {
  directEndpoints,
  joinInfoLine,
  LobbyRoom,
  localTarget,
  type RelayChoice,
  reachabilityLines,
  wantsRelay,
} from '../lobby-host.js';
import {
  type BoundListener,
  DEFAULT_PORT,
  listenerSlots,
  listenSession,
  MAX_SPECTATORS,
  signalUrl,
  TRANSPORTS,
  type TransportName,
  WEBRTC_HOST_PEER,
  type WebRtcTarget,
  webrtcRoom,
} from '../net.js';
import { Display, inputSource, PLAYER_KEYS, paceFrames } from '../play.js';
import { lockstepStatsLine, statsLine } from '../render.js';
import { SPACE_RACER_URL } from '../rom.js';
import { sessionFailure } from '../session-errors.js';

/** Usage text of `netplay host`. */
export const HOST_USAGE = `netplay host [--rom FILE] [--core NAME|PATH] [--port N] [--bind ADDRESS] [--transport udp|ws|webrtc]
                [--signal URL] [--room NAME] [--ice URL] [--mode M] [--players N] [--password TEXT] [--delay N]
                [--nick NAME] [--bot] [--seconds N] [--finals FILE] [--lobby URL [--name ROOM-NAME] [--relay|--no-relay]]
                [--no-links]

Hosts a game of the ROM and plays player 1 from the keyboard (W/S/A/D or arrows, Space/J, K; Q quits).
Others join with "netplay join HOST:PORT" (the same ROM), spectators with --spectate; the host prints
the addresses a friend can use.
  --rom FILE      the game (default: the embedded Space Racer, CHIP-8)
  --core C        a libretro core instead of CHIP-8: a name in Debian's libretro folder
                  (nestopia → /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so) or a path;
                  --rom is then the core's content (e.g. /usr/share/nes/efp.nes) and required
  --port N        port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --bind ADDRESS  address to listen on (default 0.0.0.0: reachable by others; 127.0.0.1: this machine only)
  --transport T   udp (default), ws (WebSocket, for browsers) or webrtc (peer to peer through a
                  signaling server: --signal; browsers and terminals meet there, no port forwarding)
  --signal URL    webrtc: the signaling server (ws://HOST:PORT; "netplay signal" runs one)
  --room NAME     webrtc: the room (default "netplay-" + the start of the ROM's hash, so joiners with
                  the same ROM find it; pick your own on a shared server)
  --ice URL       webrtc: a STUN/TURN server (repeatable; default none: LAN or one machine)
  --mode M        rollback (default), lockstep-cs (FCE Ultra client-server), lockstep-p2p (MAMEHub mesh)
                  or frame-advance (FS-UAE); the P2P modes run through this host, which relays
  --players N     player slots including the host (default 2; the game starts when all are in,
                  except in lockstep-cs, where it starts with the first and others join late)
  --password P    password joiners must give (sent as a salted SHA-256 proof, never in clear)
  --delay N       frames of input delay (default 0)
  --nick NAME     the host's nick (default "host")
  --bot           a bot plays instead of the keyboard (stop it with Ctrl-C)
  --seconds N     stop after N seconds (default: until Q or Ctrl-C)
  --finals FILE   at the end, write the CRC-32 of the state of each final frame to FILE (the format
                  of "netplay join --finals"), to compare with the joiners'
  --no-links      rollback with 3+ players: relay every message between joins through this host.
                  Default: the joins link to each other directly (each opens a port, or a second
                  name in the WebRTC room) and play on under a new host when this one leaves
  --lobby URL     announce the room on a lobby (http://HOST:PORT; "netplay-lobby" runs one) while the
                  host runs: game, core, mode, players/slots, password yes/no and how to join; prints
                  the room id and "netplay join --lobby URL ROOM". With --transport webrtc the room
                  meets through the lobby's signaling (no --signal/--room)
  --name TEXT     the room's name on the lobby (default "NICK's GAME")
  --relay         udp/ws: register with the lobby's relay so joiners behind NAT reach this host
                  (default: only when no address of this machine is public); --no-relay: never`;

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
  /** The network interfaces the friend addresses come from (default `os.networkInterfaces()`). */
  readonly interfaces?: Interfaces;
}

/** The host's line while it waits: who is in (nick and slot) and how many players are missing. */
export function hostWaitingLine(host: NetplayHost, players: number): string {
  const names: string[] = [`${host.nick} (P1)`];
  let spectators = 0;
  let handshaking = 0;
  for (const p of host.peerList()) {
    if (p.slot !== undefined && p.stage === 'playing') names.push(`${p.nick ?? '?'} (P${p.slot + 1})`);
    else if (p.stage === 'spectating') spectators++;
    else handshaking++;
  }
  const missing = Math.max(0, players - names.length);
  return (
    `waiting for players: ${names.join(', ')} in; ${missing} missing` +
    (spectators > 0 ? `; ${spectators} spectating` : '') +
    (handshaking > 0 ? `; ${handshaking} connecting` : '')
  );
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
        signal: { type: 'string' },
        room: { type: 'string' },
        ice: { type: 'string', multiple: true },
        mode: { type: 'string' },
        players: { type: 'string' },
        password: { type: 'string' },
        delay: { type: 'string' },
        nick: { type: 'string' },
        bot: { type: 'boolean' },
        seconds: { type: 'string' },
        finals: { type: 'string' },
        lobby: { type: 'string' },
        name: { type: 'string' },
        relay: { type: 'boolean' },
        'no-relay': { type: 'boolean' },
        'no-links': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(`${HOST_USAGE}\n`);
    return ExitCode.Ok;
  }
  if (values.rom === undefined && values.core !== undefined)
    throw new CliError(ExitCode.Usage, `host --core ${values.core} needs --rom FILE\n\n${HOST_USAGE}`);
  const port = intOption('port', values.port, DEFAULT_PORT, 0, 65535);
  const transport = choiceOption('transport', values.transport, TRANSPORTS, 'udp');
  const mode: SessionMode = choiceOption('mode', values.mode, SESSION_MODES, 'rollback');
  const players = intOption('players', values.players, 2, 2, 16);
  const delay = intOption('delay', values.delay, 0, 0, 30);
  const seconds = values.seconds === undefined ? undefined : numberOption('seconds', values.seconds, 0, 0.1, 1e6);
  const bind = values.bind ?? '0.0.0.0';
  const lobby = values.lobby === undefined ? undefined : lobbyUrl(values.lobby);
  const relayChoice = checkLobbyOptions(values, transport, lobby);
  const signal =
    transport !== 'webrtc' ? undefined : lobby !== undefined ? lobbySignalUrl(lobby) : signalUrl(values.signal);
  if (transport !== 'webrtc' && (values.signal !== undefined || values.room !== undefined))
    throw new CliError(ExitCode.Usage, '--signal and --room go with --transport webrtc');
  const clock = deps.clock ?? systemClock;
  const finalsPath = values.finals;
  // Created (or emptied) before the game, so an unwritable path fails first.
  if (finalsPath !== undefined) await writeFinalsFile(finalsPath, '');

  const game = await openGame(
    {
      ...(values.rom !== undefined ? { rom: values.rom } : {}),
      ...(values.core !== undefined ? { core: values.core } : {}),
    },
    game4(players),
    SPACE_RACER_URL,
    io,
  );
  const gameName = basename(values.rom ?? 'spaceracer.ch8').slice(0, 64);
  const announce = {
    name: values.name ?? `${values.nick ?? 'host'}'s ${gameName}`.slice(0, 64),
    game: gameName,
    core: game.content.coreId.slice(0, 64),
    mode,
    hasPassword: values.password !== undefined && values.password !== '',
    players: 1,
    slots: players,
  };
  let webrtc: WebRtcTarget | undefined;
  let room: LobbyRoom | undefined;
  try {
    // WebRTC on a lobby: the room's id is the signaling room, so the room is announced first.
    if (lobby !== undefined && transport === 'webrtc')
      room = await LobbyRoom.announce(lobby, { ...announce, endpoints: [{ kind: 'webrtc', peer: WEBRTC_HOST_PEER }] });
    webrtc =
      signal === undefined
        ? undefined
        : {
            signal,
            room: room?.id ?? webrtcRoom(values.room, game.content.contentHash),
            ...(values.ice !== undefined ? { ice: values.ice } : {}),
            ...(values.bind !== undefined && values.bind !== '0.0.0.0' ? { bindAddress: values.bind } : {}),
          };
  } catch (e) {
    await room?.close();
    game.close();
    throw e;
  }
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
      // Rollback with 3+ players: direct links between the joins (every transport can make them),
      // so their messages skip this host and the game outlives it.
      ...(mode === 'rollback' && values['no-links'] !== true ? { links: true } : {}),
      ...(values.nick !== undefined ? { nick: values.nick } : {}),
      ...(values.password ? { password: values.password } : {}),
    });
  } catch (e) {
    await room?.close();
    game.close();
    throw sessionFailure(e);
  }
  let bound: BoundListener;
  // udp/ws on a lobby: the room is announced once the port is known; through the relay, a UDP
  // host also listens for netplay-ws on loopback (the relay's WebSocket clients reach it there).
  let relayListener: BoundListener | undefined;
  let relayed = false;
  try {
    bound = await listenSession(transport, bind, port, clock, listenerSlots(players), webrtc);
    if (lobby !== undefined && transport !== 'webrtc') {
      try {
        room = await LobbyRoom.announce(lobby, {
          ...announce,
          endpoints: directEndpoints(transport, bind, bound.port, deps.interfaces),
        });
        if (wantsRelay(relayChoice, bind, deps.interfaces)) {
          const local = localTarget(bind);
          if (transport === 'udp') relayListener = await listenSession('ws', local, 0, clock, listenerSlots(players));
          const wsPort = relayListener?.port ?? bound.port;
          try {
            await room.relay(
              `ws://${hostPort(local, wsPort)}`,
              transport === 'udp' ? { host: local, port: bound.port } : undefined,
              clock,
            );
            relayed = true;
          } catch (e) {
            if (relayChoice === 'on') throw e;
            io.err(`host: ${(e as Error).message}; going on without the relay\n`);
            relayListener?.listener.close('closed: no relay');
            relayListener = undefined;
          }
        }
      } catch (e) {
        relayListener?.listener.close('closed: the host failed');
        bound.listener.close('closed: the host failed');
        throw e;
      }
    }
  } catch (e) {
    await room?.close();
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
  const where =
    webrtc !== undefined ? `webrtc in room "${webrtc.room}" of ${webrtc.signal}` : `${transport} ${bind}:${bound.port}`;
  const display = new Display(io, {
    title: `netplay host: ${game.title} on ${where}, ${mode}, ${players} players`,
    screen: () => (host.started ? game.screen() : undefined),
    stats: () => {
      const s = host.rollback;
      const lockstep = host.lockstepReport();
      if (s !== undefined) return [statsLine(host.nick, s, 0)];
      if (lockstep !== undefined) return [lockstepStatsLine(host.nick, lockstep, 0)];
      return [hostWaitingLine(host, players)];
    },
    // A bot plays: the keyboard is not read, so Q does nothing (Ctrl-C stops the host).
    keys: values.bot ? 'a bot plays P1: Ctrl-C to stop' : PLAYER_KEYS,
  });
  if (room !== undefined)
    room.onRelayLost = (why) =>
      display.event(`lobby relay closed this host's registration (${why}): joiners through the relay are cut off`);
  // The lobby's player count follows the session (the host and every player in).
  const announcePlayers = () =>
    room?.setPlayers(1 + host.peerList().filter((p) => p.slot !== undefined && p.stage === 'playing').length);
  host.on('peer-joined', ({ nick, slot, rejoined }) => {
    display.event(
      slot === undefined
        ? `${nick} joined as a spectator`
        : rejoined
          ? `${nick} is back as P${slot + 1}`
          : `${nick} joined as P${slot + 1}`,
    );
    queueMicrotask(announcePlayers);
  });
  host.on('peer-refused', ({ nick, remoteAddress, error }) =>
    display.event(`refused ${nick ?? remoteAddress}: ${error.code}: ${error.message}`),
  );
  host.on('peer-left', ({ nick, slot, reason }) => {
    display.event(
      `${nick} left${slot === undefined ? '' : ` (P${slot + 1}; the game goes on without it)`}: ${reason || 'connection closed'}`,
    );
    queueMicrotask(announcePlayers);
  });
  // The session emits `started` before the `peer-joined` of the player that completed the group
  // (lockstep-cs starts with its first joiner): printed once that event has been handled.
  host.on('started', ({ frame, roster }) =>
    queueMicrotask(() =>
      display.event(
        roster.length >= players
          ? `all players are in: the game starts at frame ${frame}`
          : `the game starts at frame ${frame} with ${roster.length} of ${players} players (${mode}: the others join while it runs)`,
      ),
    ),
  );
  let ended: SessionError | undefined;
  host.on('ended', ({ error }) => {
    ended = error;
    display.event(`the game ended: ${error.message}`);
  });
  const romArgs = `${values.core !== undefined ? ` --core ${values.core}` : ''}${values.rom !== undefined ? ` --rom ${values.rom}` : ''}`;
  const gameArgs = `${romArgs}${players !== 2 ? ` --players ${players}` : ''}`;
  if (webrtc !== undefined) {
    io.out(
      `hosting on ${where}: join with ` +
        `"netplay join --transport webrtc --signal ${webrtc.signal} --room ${webrtc.room}${gameArgs}"\n`,
    );
  } else {
    const joinArgs = `${transport === 'ws' ? ' --transport ws' : ''}${gameArgs}`;
    io.out(`hosting on ${where}: join with "netplay join HOST:${bound.port}${joinArgs}"\n`);
    for (const line of friendLines(bind, bound.port, transport === 'ws' ? 'TCP' : 'UDP', joinArgs, deps.interfaces))
      io.out(`${line}\n`);
  }
  // Accepting before the lobby lines (their join-info lookup awaits): a joiner that found the
  // room in a listing is not lost in between.
  const off = host.listen(bound.listener);
  const offRelay = relayListener !== undefined ? host.listen(relayListener.listener) : undefined;
  if (room !== undefined && lobby !== undefined)
    await printLobbyLines(io, room, lobby, romArgs, relayed, {
      transport,
      bind,
      port: bound.port,
      interfaces: deps.interfaces,
    });
  deps.onHost?.(host);
  deps.onListening?.(bound.port);
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
    offRelay?.();
    host.close('closed: the host left');
    // Let the close reach the peers before the socket goes.
    await new Promise<void>((resolve) => clock.setTimer(100, resolve));
    bound.listener.close('closed: the host left');
    relayListener?.listener.close('closed: the host left');
    if (room !== undefined) {
      await room.close();
      io.out(`host: room ${room.id} removed from the lobby\n`);
    }
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

/** The relay choice of `--relay` / `--no-relay`, after checking the lobby options go together. */
function checkLobbyOptions(
  values: { relay?: boolean; 'no-relay'?: boolean; name?: string; signal?: string; room?: string },
  transport: TransportName,
  lobby: string | undefined,
): RelayChoice {
  if (lobby === undefined) {
    if (values.name !== undefined || values.relay || values['no-relay'])
      throw new CliError(ExitCode.Usage, '--name, --relay and --no-relay go with --lobby URL');
    return 'auto';
  }
  if (values.relay && values['no-relay']) throw new CliError(ExitCode.Usage, '--relay or --no-relay, not both');
  if (transport === 'webrtc' && (values.signal !== undefined || values.room !== undefined))
    throw new CliError(
      ExitCode.Usage,
      "--lobby with --transport webrtc uses the lobby's signaling and the room's id: no --signal or --room",
    );
  if (transport === 'webrtc' && values.relay)
    throw new CliError(ExitCode.Usage, '--relay goes with --transport udp or ws (webrtc connects peer to peer)');
  return values.relay ? 'on' : values['no-relay'] ? 'off' : 'auto';
}

/** The lobby's signaling URL (`ws://…/signal` of an `http://…` lobby). */
function lobbySignalUrl(lobby: string): string {
  return `${lobby.replace(/^http/, 'ws')}/signal`;
}

/** The lines `host --lobby` prints: the room, the join line, reachability, and what joiners get. */
async function printLobbyLines(
  io: CliIo,
  room: LobbyRoom,
  lobby: string,
  gameArgs: string,
  relayed: boolean,
  where: { transport: TransportName; bind: string; port: number; interfaces: Interfaces | undefined },
): Promise<void> {
  const a = room.announced;
  io.out(
    `lobby: room ${room.id} "${a.name}" announced on ${lobby} (${a.game}, ${a.core}, ${a.mode}, ` +
      `${a.players}/${a.slots} players, password ${a.hasPassword ? 'yes' : 'no'})\n`,
  );
  io.out(`join through the lobby with "netplay join --lobby ${lobby} ${room.id}${gameArgs}"\n`);
  const lines =
    where.transport === 'webrtc'
      ? [
          "peer to peer over WebRTC: joiners meet this host through the lobby's signaling; no port forwarding " +
            '(without a STUN/TURN server, --ice, only on one network)',
        ]
      : reachabilityLines(where.transport, where.bind, where.port, relayed, where.interfaces);
  for (const line of lines) io.out(`${line}\n`);
  try {
    io.out(`${joinInfoLine(await room.joinInfo())}\n`);
  } catch (e) {
    io.err(`host: ${(e as Error).message}\n`);
  }
}
