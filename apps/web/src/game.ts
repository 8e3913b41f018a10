import { Chip8Core } from '@netplay/core-wasm';
import { crc32 } from '@netplay/protocol';
import {
  type JoinInfo,
  type LinkOptions,
  NetplayClient,
  NetplayHost,
  SESSION_CHANNELS,
  SessionError,
} from '@netplay/session';
import { type Connection, systemClock } from '@netplay/transport';
import { connectWebRtc, listenWebRtc, type RtcSetup } from '@netplay/transport-webrtc';
import { connect, waitOpen } from '@netplay/transport-ws';
import { chip8Content } from './content.js';
import { BotInput, type InputSource, KeyboardInput } from './input.js';
import { type LoopPeer, runLoop } from './loop.js';
import type { PageParams } from './params.js';
import { HOST_PEER, newPeerName, newRoomName, shareLink } from './share.js';
import { rollbackStats } from './stats.js';

/** What the page exposes as `window.netplay` (the end-to-end tests read it). */
export interface NetplayState {
  /** The session frame the page is at (-1 before the game starts). */
  frame: number;
  /** CRC-32 of the state of each final frame (every input known), by frame. */
  readonly finals: Map<number, number>;
  /** Set once the page stopped playing (after `seconds` or `frames`, or when the session closed). */
  done: boolean;
  /** The error that stopped the page, if any. */
  error: string | undefined;
  /** The joined nick and slot (undefined: spectator), once joined (a hosting page: slot 0). */
  nick: string | undefined;
  slot: number | undefined;
  /** The share link, once this page hosts a game over WebRTC. */
  link: string | undefined;
  /**
   * Every host hand-over this page saw, in order (the session's `host-changed`): the new host's
   * nick, whether it is this page, the frame. A later one follows when the elected host leaves too
   * (e.g. it stopped at `frames` first): the status line shows only the last.
   */
  readonly hosts: { nick: string; self: boolean; frame: number }[];
}

/** What the game loop draws to. */
export interface GameView {
  status(text: string): void;
  stats(text: string): void;
  draw(core: Chip8Core): void;
  /** Shows the link a guest opens (hosting page only). */
  link(url: string): void;
}

/** Records the CRC-32 of each final frame's savestate into `state.finals`. */
function finalsRecorder(
  state: NetplayState,
  driver: () => { stateOf(frame: number): Uint8Array | undefined } | undefined,
): { record(upTo: number): void; last(): number } {
  let lastFinal = -1;
  return {
    record(upTo) {
      const d = driver();
      if (d === undefined) return;
      for (let f = lastFinal + 1; f <= upTo; f++) {
        const st = d.stateOf(f);
        if (st !== undefined) state.finals.set(f, crc32(st));
        lastFinal = f;
      }
    },
    last: () => lastFinal,
  };
}

function inputFor(params: PageParams, slot: number): InputSource {
  return params.bot ? new BotInput(params.seed ?? 2 + slot) : new KeyboardInput(window);
}

/** The WebRTC setup of the page: the browser's `RTCPeerConnection`, the `ice` servers. */
function rtcOf(params: PageParams): RtcSetup {
  return { config: { iceServers: params.ice.map((urls) => ({ urls })) } };
}

/** How a client page reaches its host. */
interface Route {
  /** What the status line names (`ws://…`, or `room … on ws://…`). */
  readonly label: string;
  /** A connection declaring SESSION_CHANNELS (open, or queuing sends until it opens). */
  open(): Promise<Connection>;
  /** Whether a player refused with `server-full` comes back as a spectator (the share link). */
  readonly spectateWhenFull: boolean;
  /** Direct links to the other players (WebRTC: in the same room), used when the host chooses them. */
  readonly links?: LinkOptions;
}

/**
 * A page's direct links to the other players of a rollback game (3+ players): it listens in the
 * session's room under a second peer name and dials the others' (@netplay/session, "Direct links
 * and host hand-over"), so the game outlives the hosting page.
 */
function webRtcLinks(signal: string, room: string, params: PageParams): LinkOptions {
  const rtc = rtcOf(params);
  const peer = `${newPeerName()}-l`;
  return {
    listen: async () => ({
      listener: await listenWebRtc({ signaling: { url: signal, room, peer }, channels: SESSION_CHANNELS, rtc }),
      address: peer,
    }),
    connect: (address) =>
      connectWebRtc({
        signaling: { url: signal, room, peer: newPeerName() },
        to: address,
        channels: SESSION_CHANNELS,
        rtc,
      }),
  };
}

/** Joins as a client (over WebSocket with `?host=`, over WebRTC with `?room=`) and plays. */
export async function play(rom: Uint8Array, params: PageParams, state: NetplayState, view: GameView): Promise<void> {
  let route: Route;
  if (params.host !== undefined) {
    const url = params.host;
    route = {
      label: url,
      spectateWhenFull: false,
      open: async () => {
        const conn = connect(url, { channels: SESSION_CHANNELS });
        await waitOpen(conn);
        return conn;
      },
    };
  } else if (params.room !== undefined && params.signal !== undefined) {
    const { room, signal } = params;
    route = {
      label: `room ${room} on ${signal}`,
      spectateWhenFull: true,
      open: async () =>
        connectWebRtc({
          signaling: { url: signal, room, peer: newPeerName() },
          to: HOST_PEER,
          channels: SESSION_CHANNELS,
          rtc: rtcOf(params),
        }),
      links: webRtcLinks(signal, room, params),
    };
  } else throw new Error('no ?host=ws://HOST:PORT or ?signal=…&room=… in the URL');

  const core = await Chip8Core.create(rom, { ports: Math.min(4, params.players) });
  const join = async (spectate: boolean): Promise<{ client: NetplayClient; info: JoinInfo }> => {
    view.status(`connecting to ${route.label}…`);
    const conn = await route.open();
    const client = new NetplayClient(conn, {
      core,
      content: chip8Content(rom),
      clock: systemClock,
      nick: params.nick,
      spectate,
      ...(params.password !== undefined ? { password: params.password } : {}),
      ...(route.links !== undefined && !spectate ? { links: route.links } : {}),
    });
    try {
      return { client, info: await client.joined() };
    } catch (e) {
      conn.close('closed: the client left');
      throw e;
    }
  };
  let joined: { client: NetplayClient; info: JoinInfo };
  try {
    joined = await join(params.spectate);
  } catch (e) {
    // The game is full (or already running): a share link watches instead.
    if (!(route.spectateWhenFull && !params.spectate && e instanceof SessionError && e.code === 'server-full')) throw e;
    view.status(`${e.message}: joining as a spectator…`);
    joined = await join(true);
  }
  const { client, info } = joined;
  state.nick = info.nick;
  state.slot = info.slot;
  const role = info.slot === undefined ? 'spectator' : `P${info.slot + 1}`;
  view.status(`joined ${route.label} as ${info.nick} (${role}), ${info.mode}, host ${info.hostNick}`);

  // The hosting page left: the players linked to each other play on under the one they elect.
  let elected = false;
  client.on('host-left', ({ nick }) => {
    if (!elected) view.status(`host left: ${nick} is gone; the players choose a new host`);
  });
  // A later hand-over follows when the elected host leaves too: the status names who left.
  let host = info.hostNick;
  client.on('host-changed', ({ nick, self, frame }) => {
    state.hosts.push({ nick, self, frame });
    elected = true;
    view.status(`host ${host} left: ${self ? `you (${nick}) are` : `${nick} is`} the new host`);
    host = nick;
  });
  let closedError: string | undefined;
  client.on('closed', ({ error }) => {
    closedError = error === undefined ? 'the session closed' : `${error.code}: ${error.message}`;
  });
  const finals = finalsRecorder(state, () => client.driver);
  const peer: LoopPeer = {
    tick: (input) => {
      client.tick(input);
    },
    record: () => {
      const s = client.rollback;
      if (s !== undefined) finals.record(Math.min(s.confirmedFrame, s.currentFrame));
      else if (client.frame !== undefined) finals.record(client.frame);
    },
    lastFinal: finals.last,
    frame: () => client.frame ?? -1,
    stats: () => {
      const s = client.rollback;
      return s !== undefined ? rollbackStats(s) : `frame ${client.frame ?? -1} (spectating: confirmed inputs only)`;
    },
    ended: () => closedError,
    leave: () => client.close('closed: the client left'),
    draw: () => view.draw(core),
  };
  const input = info.slot === undefined ? undefined : inputFor(params, info.slot);
  state.error = await runLoop(peer, input, params, (frame, stats) => {
    state.frame = frame;
    view.stats(stats);
  });
  state.done = true;
}

/** A room the hosting page was given by a lobby (see `main.ts`): its id, and the announcement to keep current. */
export interface LobbyRoom {
  /** The lobby's room id, which is also the signaling room. */
  readonly room: string;
  /** Called with the number of players (host included) whenever it changes. */
  players(count: number): void;
  /** Called once when the page stops hosting (deletes the room). */
  leave(): void;
}

/**
 * Hosts a rollback game in this page: creates a room on the signaling server `signal` (the lobby's
 * room when `lobbyRoom` is given, else an unguessable name), listens in it over WebRTC as the peer
 * named "host", shows the share link, plays player 1 and serves the players and spectators who open
 * the link (or join from a lobby's rooms page).
 */
export async function hostGame(
  rom: Uint8Array,
  params: PageParams,
  signal: string,
  state: NetplayState,
  view: GameView,
  lobbyRoom?: LobbyRoom,
): Promise<void> {
  const core = await Chip8Core.create(rom, { ports: Math.min(4, params.players) });
  const room = lobbyRoom?.room ?? newRoomName();
  view.status(`creating room ${room} on ${signal}…`);
  const listener = await listenWebRtc({
    signaling: { url: signal, room, peer: HOST_PEER },
    channels: SESSION_CHANNELS,
    rtc: rtcOf(params),
  });
  const host = new NetplayHost({
    core,
    content: chip8Content(rom),
    clock: systemClock,
    mode: 'rollback',
    players: params.players,
    // 3+ players: the guests link to each other directly (their messages skip this page, and the
    // game goes on under a new host when it closes).
    links: true,
    nick: params.nick,
    ...(params.password !== undefined ? { password: params.password } : {}),
  });
  const off = host.listen(listener);
  const link = shareLink(location.href, signal, room, params.ice);
  state.link = link;
  state.nick = params.nick;
  state.slot = 0;
  view.link(link);
  const waiting = (): void => {
    const players = host.peerList().filter((p) => p.slot !== undefined).length + 1;
    lobbyRoom?.players(players);
    if (!host.started) view.status(`hosting room ${room}: ${players} of ${params.players} players; share the link`);
  };
  waiting();
  let endedError: string | undefined;
  const offs = [
    host.on('peer-joined', waiting),
    host.on('peer-left', waiting),
    host.on('started', () => view.status(`hosting room ${room} as ${params.nick} (P1), rollback: playing`)),
    host.on('ended', ({ error }) => {
      endedError = `${error.code}: ${error.message}`;
    }),
  ];
  const neutral = new Uint8Array(core.inputBytes);
  const finals = finalsRecorder(state, () => host.driver);
  const peer: LoopPeer = {
    tick: (input) => {
      host.tick(input ?? neutral);
    },
    record: () => {
      const s = host.rollback;
      if (s !== undefined) finals.record(Math.min(s.confirmedFrame, s.currentFrame));
    },
    lastFinal: finals.last,
    frame: () => host.frame ?? -1,
    stats: () => {
      const s = host.rollback;
      return s !== undefined ? rollbackStats(s) : `waiting for ${params.players - 1} more player(s)`;
    },
    ended: () => endedError,
    leave: () => {
      lobbyRoom?.leave();
      for (const o of offs) o();
      off();
      host.close('closed: the host left');
      // Let the CLOSE messages go out before the listener (and its signaling socket) closes.
      setTimeout(() => listener.close('closed: the host left'), 200);
    },
    draw: () => view.draw(core),
  };
  state.error = await runLoop(peer, inputFor(params, 0), params, (frame, stats) => {
    state.frame = frame;
    view.stats(stats);
  });
  if (state.error !== undefined) peer.leave();
  state.done = true;
}
