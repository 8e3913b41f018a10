import { SESSION_CHANNELS } from '@netplay/session';
import {
  type Clock,
  type Connection,
  DEFAULT_ADMISSION_LIMITS,
  type Listener,
  TransportError,
} from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { connectWebRtcNode, listenWebRtcNode, nodeRtc } from '@netplay/transport-webrtc/node';
import { connectNode, listen as listenWs } from '@netplay/transport-ws/server';
import { CliError, ExitCode } from './exit-codes.js';

/** The transports the CLI speaks. */
export const TRANSPORTS = ['udp', 'ws', 'webrtc'] as const;
/** One of {@link TRANSPORTS}. */
export type TransportName = (typeof TRANSPORTS)[number];

/** The default port of `netplay host`. */
export const DEFAULT_PORT = 7845;

/** A listener and the port it got. */
export interface BoundListener {
  readonly listener: Listener;
  readonly port: number;
}

/** Spectators a CLI host admits (the session host's default). */
export const MAX_SPECTATORS = 8;

/**
 * Transport connections a CLI host's listener takes: every admitted client (`players - 1` and
 * `maxSpectators`), plus the session host's cap on connections still in the session handshake
 * (`maxPending`, default 64), plus a margin of 8 for connections the host is closing. The
 * session host evicts the oldest pending connection past `maxPending`, so half-open connections
 * can never fill the transport's slots and lock a player out.
 */
export function listenerSlots(
  players: number,
  maxSpectators = MAX_SPECTATORS,
  maxPending = DEFAULT_ADMISSION_LIMITS.maxPending,
): number {
  return players - 1 + maxSpectators + maxPending + 8;
}

/** Whether `e` (or one of its causes) is EADDRINUSE. */
export function isAddressInUse(e: unknown): boolean {
  for (let c: unknown = e; c !== undefined && c !== null; c = (c as { cause?: unknown }).cause) {
    if ((c as { code?: unknown }).code === 'EADDRINUSE') return true;
    if (String((c as Error).message ?? '').includes('EADDRINUSE')) return true;
  }
  return false;
}

/**
 * Listens for session connections (declaring `SESSION_CHANNELS`), at most `maxConnections`
 * (default {@link listenerSlots} of 2 players).
 * @throws CliError `Network`: "port N is busy" on EADDRINUSE, or the transport's message.
 */
export async function listenSession(
  transport: TransportName,
  host: string,
  port: number,
  clock: Clock,
  maxConnections = listenerSlots(2),
  webrtc?: WebRtcTarget,
): Promise<BoundListener> {
  try {
    if (transport === 'webrtc') {
      if (webrtc === undefined) throw new CliError(ExitCode.Usage, '--transport webrtc needs --signal ws://HOST:PORT');
      const l = await listenWebRtcNode({
        signaling: { url: webrtc.signal, room: webrtc.room, peer: webrtc.peer ?? WEBRTC_HOST_PEER },
        channels: SESSION_CHANNELS,
        maxConnections,
        clock,
        rtc: rtcSetup(webrtc),
      });
      return { listener: l, port: 0 };
    }
    if (transport === 'udp') {
      const l = await listenUdp({ channels: SESSION_CHANNELS, host, port, clock, maxConnections });
      return { listener: l, port: l.port };
    }
    const l = await listenWs({ channels: SESSION_CHANNELS, host, port, maxConnections });
    return { listener: l, port: l.port };
  } catch (e) {
    if (isAddressInUse(e))
      throw new CliError(ExitCode.Network, `port ${port} is busy (EADDRINUSE): is another host running? Try --port`);
    if (e instanceof TransportError && webrtc !== undefined && transport === 'webrtc')
      throw new CliError(
        ExitCode.Network,
        `cannot host in room "${webrtc.room}" of ${webrtc.signal}: ${e.message}` +
          (/name-taken|taken/i.test(e.message) ? ' (another host is in this room: pick another --room)' : ''),
      );
    if (e instanceof TransportError)
      throw new CliError(ExitCode.Network, `cannot listen on ${host}:${port}: ${e.message}`);
    throw e;
  }
}

/** The peer name a WebRTC host takes in its signaling room (the clients connect to it). */
export const WEBRTC_HOST_PEER = 'host';

/** Where WebRTC peers meet: a signaling server, a room, and the ICE configuration. */
export interface WebRtcTarget {
  /** The signaling server (`ws://` or `wss://`). */
  readonly signal: string;
  /** The room (1–64 of `A-Z a-z 0-9 . _ ~ -`). */
  readonly room: string;
  /** STUN/TURN URLs (none: host candidates only, enough on one machine or a LAN). */
  readonly ice?: readonly string[];
  /** node-datachannel's `bindAddress` (gather candidates on this address only, e.g. 127.0.0.1). */
  readonly bindAddress?: string;
  /** The peer name a listener takes in the room (default {@link WEBRTC_HOST_PEER}; a join's direct links take their own). */
  readonly peer?: string;
}

const ROOM_NAME = /^[A-Za-z0-9._~-]{1,64}$/;

/**
 * The room of `--room`, or the default derived from the game's content hash
 * (`netplay-` + its first 12 hex digits): a host and a joiner with the same ROM meet in the same
 * room without being told its name. On a shared signaling server pick your own `--room`.
 * @throws CliError `Usage` for a name the signaling protocol refuses.
 */
export function webrtcRoom(room: string | undefined, contentHash: string): string {
  if (room === undefined) return `netplay-${contentHash.slice(0, 12)}`;
  if (!ROOM_NAME.test(room))
    throw new CliError(ExitCode.Usage, `--room must be 1-64 characters of A-Z a-z 0-9 . _ ~ -, got "${room}"`);
  return room;
}

/** Checks `--signal`: a `ws://` or `wss://` URL. */
export function signalUrl(url: string | undefined): string {
  if (url === undefined) throw new CliError(ExitCode.Usage, '--transport webrtc needs --signal ws://HOST:PORT');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(ExitCode.Usage, `--signal must be a ws:// or wss:// URL, got "${url}"`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
    throw new CliError(ExitCode.Usage, `--signal must be a ws:// or wss:// URL, got "${url}"`);
  return url;
}

/** node-datachannel's setup for `target`. */
function rtcSetup(target: WebRtcTarget) {
  return nodeRtc({
    iceServers: (target.ice ?? []).map((urls) => ({ urls })),
    ...(target.bindAddress !== undefined ? { bindAddress: target.bindAddress } : {}),
  });
}

/**
 * A client's peer name in the room: its nick reduced to the characters the signaling protocol
 * takes, plus `-` and 8 random hex digits (two joiners with one nick must not collide; the session
 * renames duplicate nicks itself).
 */
export function webrtcPeerName(nick: string, random: () => number = defaultRandom): string {
  const base = nick.replace(/[^A-Za-z0-9._~-]/g, '').slice(0, 40) || 'player';
  return `${base}-${(random() >>> 0).toString(16).padStart(8, '0')}`;
}

function defaultRandom(): number {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0] ?? 0;
}

/** Parses `HOST:PORT` (`[v6]:PORT` for IPv6). */
export function parseAddress(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 1 && port <= 65535))
    throw new CliError(ExitCode.Usage, `expected HOST:PORT (e.g. 127.0.0.1:${DEFAULT_PORT}), got "${text}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * Opens a session connection to a host (`wsUrl`: a whole `ws://` URL instead of `host:port`, e.g.
 * a lobby relay's `/relay/join?room=ID`; `webrtc.to`: the host's peer name, default `host`).
 * @throws CliError `Network` when the host cannot be reached or refuses the transport connection.
 */
export async function connectSession(
  transport: TransportName,
  host: string,
  port: number,
  clock: Clock,
  webrtc?: WebRtcTarget & { readonly nick: string; readonly to?: string },
  wsUrl?: string,
): Promise<Connection> {
  const where =
    transport === 'webrtc' && webrtc !== undefined
      ? `room "${webrtc.room}" of ${webrtc.signal}`
      : transport === 'ws' && wsUrl !== undefined
        ? wsUrl
        : `${host}:${port}`;
  try {
    if (transport === 'udp') return await connectUdp({ channels: SESSION_CHANNELS, host, port, clock });
    let conn: Connection;
    if (transport === 'webrtc') {
      if (webrtc === undefined) throw new CliError(ExitCode.Usage, '--transport webrtc needs --signal ws://HOST:PORT');
      conn = connectWebRtcNode({
        signaling: { url: webrtc.signal, room: webrtc.room, peer: webrtcPeerName(webrtc.nick) },
        to: webrtc.to ?? WEBRTC_HOST_PEER,
        channels: SESSION_CHANNELS,
        clock,
        rtc: rtcSetup(webrtc),
      });
    } else
      conn = connectNode(wsUrl ?? `ws://${host.includes(':') ? `[${host}]` : host}:${port}`, {
        channels: SESSION_CHANNELS,
      });
    await new Promise<void>((resolve, reject) => {
      if (conn.state === 'open') return resolve();
      const offOpen = conn.on('open', () => {
        offOpen();
        offClose();
        resolve();
      });
      const offClose = conn.on('close', ({ reason, error }) => {
        offOpen();
        offClose();
        reject(error ?? new TransportError('refused', reason || 'connection refused'));
      });
    });
    return conn;
  } catch (e) {
    if (e instanceof TransportError) {
      const why =
        e.code === 'timeout'
          ? 'no answer (is the host running, and is it the right transport?)'
          : transport === 'webrtc' && /no peer/i.test(e.message)
            ? `${e.message} (no host in this room: is it running, with the same --room or the same ROM?)`
            : e.message;
      throw new CliError(
        e.code === 'refused' && /full/i.test(e.message) ? ExitCode.Full : ExitCode.Network,
        `cannot connect to ${where}: ${why}`,
      );
    }
    throw e;
  }
}
