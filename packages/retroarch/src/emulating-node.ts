import type { Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  RetroArchClientEmulator,
  type RetroArchClientEmulatorEvent,
  type RetroArchClientEmulatorOptions,
} from './emulating-client.js';
import { RetroArchEmulatingHost, type RetroArchEmulatingHostOptions } from './emulating-host.js';
import type { RetroArchHostEvent, RetroArchHostOptions } from './host.js';
import {
  type ConnectRetroArchOptions,
  connectRetroArch,
  type ListenRetroArchHostOptions,
  listenRetroArchHost,
  type RetroArchConnection,
  type RetroArchHostSocket,
} from './node.js';

/** Options of {@link serveRetroArchGame}. */
export interface ServeRetroArchGameOptions
  extends RetroArchEmulatingHostOptions,
    Omit<ListenRetroArchHostOptions, 'host' | 'frame' | 'onEvent'> {
  /** Connection options besides what the game sets (nick, password, salt, handshake timeout…). */
  readonly connection?: Omit<
    RetroArchHostOptions,
    'info' | 'session' | 'canPlay' | 'playerDevice' | 'onEvent' | 'onOutput'
  >;
  /** Frames per second of the host's clock. Default 60 (NES: 60.0988; RetroArch paces by the core's fps). */
  readonly fps?: number;
  /** Every connection event (after the game saw it). */
  readonly onConnectionEvent?: (connection: RetroArchHostSocket, event: RetroArchHostEvent) => void;
}

/** A running {@link serveRetroArchGame}. */
export interface RetroArchGameServer {
  /** The listening `node:net` server (its `address()` gives the port when 0 was asked). */
  readonly server: Server;
  /** The host that runs the game: its stats, events and frame. */
  readonly game: RetroArchEmulatingHost;
  /** Stops the clock and the listener (connections are ended by the listener's close). */
  close(): Promise<void>;
}

/**
 * Hosts a game that real RetroArch 1.14 clients join: a {@link RetroArchEmulatingHost} on
 * `listenRetroArchHost`, clocked at `fps` by a timer (frames that wait for the player's input are
 * run as soon as it arrives). Resolves once listening.
 */
export async function serveRetroArchGame(options: ServeRetroArchGameOptions): Promise<RetroArchGameServer> {
  const game = new RetroArchEmulatingHost(options);
  const fps = options.fps ?? 60;
  const t0 = performance.now();
  const f0 = game.frame;
  const target = (): number => f0 + Math.floor(((performance.now() - t0) * fps) / 1000);
  const sockets = new Set<RetroArchHostSocket>();
  const server = await listenRetroArchHost({
    ...options,
    port: options.port,
    host: () => ({ ...options.connection, ...game.hostOptions() }),
    onEvent: (c, e) => {
      if (e.type === 'joined') sockets.add(c);
      if (e.type === 'closed') sockets.delete(c);
      game.onPeerEvent(c, e);
      options.onConnectionEvent?.(c, e);
      if (e.type === 'relay') game.runUntil(target());
    },
  });
  const clock = setInterval(() => game.runUntil(target()), 4);
  return {
    server,
    game,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(clock);
        for (const s of sockets) s.socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Options of {@link connectRetroArchEmulating}. */
export interface ConnectRetroArchEmulatingOptions
  extends ConnectRetroArchOptions,
    Omit<RetroArchClientEmulatorOptions, 'requestSavestate' | 'onEvent'> {
  /** The emulator's events. */
  readonly onEmulatorEvent?: (event: RetroArchClientEmulatorEvent) => void;
}

/** A {@link RetroArchConnection} whose client emulates the session. */
export interface RetroArchEmulatingConnection extends RetroArchConnection {
  /** The emulator that runs the game next to the client: its stats (CRCs checked, mismatches, loads). */
  readonly emulator: RetroArchClientEmulator;
}

/**
 * Joins a RetroArch host with a client that runs the game too: a {@link RetroArchClientEmulator}
 * fed by the client's events (savestates, every client's INPUT, CRCs) and our own INPUT; a CRC
 * mismatch is answered with REQUEST_SAVESTATE. `onInputSent` sees our INPUT after the emulator;
 * `relay` and `session` join through a RetroArch tunnel relay as with {@link connectRetroArch}.
 * Resolves once connected.
 */
export async function connectRetroArchEmulating(
  options: ConnectRetroArchEmulatingOptions,
): Promise<RetroArchEmulatingConnection> {
  let conn: RetroArchConnection | undefined;
  const emulator = new RetroArchClientEmulator({
    core: options.core,
    ...(options.requestOnMismatch !== undefined ? { requestOnMismatch: options.requestOnMismatch } : {}),
    ...(options.history !== undefined ? { history: options.history } : {}),
    ...(options.shiftOnRepair !== undefined ? { shiftOnRepair: options.shiftOnRepair } : {}),
    requestSavestate: () => conn?.client.requestSavestate(),
    ...(options.onEmulatorEvent !== undefined ? { onEvent: options.onEmulatorEvent } : {}),
  });
  conn = await connectRetroArch({
    ...options,
    onEvent: (e) => {
      emulator.onClientEvent(e);
      options.onEvent?.(e);
    },
    onInputSent: (frame, words) => {
      emulator.onInputSent(frame, words);
      options.onInputSent?.(frame, words);
    },
  });
  return Object.assign(conn, { emulator });
}
