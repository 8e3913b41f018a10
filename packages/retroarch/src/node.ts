/**
 * Node-only entry (`@netplay/retroarch/node`): the `node:net` shell around the sans-I/O client,
 * and the recorder's command.
 * @packageDocumentation
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressKey, type RateLimits } from '@netplay/transport';
import { RetroArchAdmission, type RetroArchAdmissionOptions } from './admission.js';
import { RetroArchClient } from './client.js';
import type { RetroArchClientEvent } from './client-events.js';
import type { RetroArchClientOptions } from './client-options.js';
import { RetroArchError } from './errors.js';
import { RetroArchHostConnection, type RetroArchHostEvent, type RetroArchHostOptions } from './host.js';
import { encodeTunnelMessage, parseTunnelId, parseTunnelRelayAddress } from './tunnel-protocol.js';

export {
  type ConnectRetroArchEmulatingOptions,
  connectRetroArchEmulating,
  type RetroArchEmulatingConnection,
  type RetroArchGameServer,
  type ServeRetroArchGameOptions,
  serveRetroArchGame,
} from './emulating-node.js';
export { RECORD_USAGE, runRecordCommand } from './record-command.js';
export {
  DEFAULT_TUNNEL_HOST_RATE_LIMITS,
  DEFAULT_TUNNEL_SESSION_RATE_LIMITS,
  type ListenRetroArchTunnelOptions,
  type RetroArchTunnel,
  type RetroArchTunnelEvents,
  type RetroArchTunnelSessionInfo,
  type RetroArchTunnelStats,
} from './tunnel-options.js';
export { listenRetroArchTunnel } from './tunnel-server.js';

/** Options of {@link connectRetroArch}. */
export interface ConnectRetroArchOptions extends Omit<RetroArchClientOptions, 'onOutput'> {
  /** Host address (default 127.0.0.1). */
  readonly host?: string;
  /** Host port (required unless `relay` is given). */
  readonly port?: number;
  /** Local address to connect from (default: the system's choice). */
  readonly localAddress?: string;
  /**
   * Join through a RetroArch tunnel relay (`host:port`, `[v6]:port`) instead of connecting to the
   * host: the socket opens with `RATS` + `session`, and ordinary netplay follows once the host has
   * linked (`host` and `port` are then ignored).
   */
  readonly relay?: string;
  /** The relay session id (24 hex digits, as the relay or the host's log names it); with `relay`. */
  readonly session?: string;
}

/** A {@link RetroArchClient} on a TCP socket. */
export interface RetroArchConnection {
  /** The sans-I/O client speaking the protocol on this socket: its state, session info and API. */
  readonly client: RetroArchClient;
  /** The TCP socket (to the host, or to the relay when `relay` was given); closed with the session. */
  readonly socket: Socket;
  /** Sends whatever the client has queued (API calls schedule it themselves). */
  flush(): void;
  /** Resolves when the session is closed (by either side), with the error if one closed it. */
  readonly closed: Promise<RetroArchError | undefined>;
  /** Sends DISCONNECT, flushes and ends the socket. */
  close(): void;
}

/**
 * Connects to a RetroArch host and runs a {@link RetroArchClient} on the socket: every chunk is
 * fed with `performance.now()`, output is flushed after each chunk or API call, and a timer ticks
 * the client every 100 ms. Resolves once connected (the handshake then runs; watch `synced`).
 * With `relay` and `session` it connects to a RetroArch tunnel relay and opens with `RATS` + the
 * session id; the handshake timeout then also covers the host's link through the relay.
 * @throws RetroArchError `state` (rejects) without a port or relay session;
 * RetroArchTunnelError `bad-address` / `bad-id` for a relay address or session id that does not parse.
 */
export function connectRetroArch(options: ConnectRetroArchOptions): Promise<RetroArchConnection> {
  let target: { host: string; port: number };
  let opening: Uint8Array | undefined;
  try {
    if (options.relay !== undefined) {
      if (options.session === undefined)
        throw new RetroArchError('state', 'joining through a relay needs the session id (`session`)');
      target = parseTunnelRelayAddress(options.relay);
      opening = encodeTunnelMessage({ type: 'session', id: parseTunnelId(options.session) });
    } else {
      if (options.port === undefined) throw new RetroArchError('state', 'connectRetroArch needs `port` (or `relay`)');
      target = { host: options.host ?? '127.0.0.1', port: options.port };
    }
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    const socket = connect({
      port: target.port,
      host: target.host,
      ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
    });
    socket.setNoDelay(true);
    let scheduled = false;
    let resolveClosed: (e: RetroArchError | undefined) => void = () => undefined;
    const closed = new Promise<RetroArchError | undefined>((r) => {
      resolveClosed = r;
    });
    const flush = (): void => {
      scheduled = false;
      const bytes = client.takeOutput();
      if (bytes !== undefined && !socket.destroyed) socket.write(bytes);
    };
    const onEvent = (e: RetroArchClientEvent): void => {
      options.onEvent?.(e);
      if (e.type === 'closed') {
        flush();
        socket.end();
        resolveClosed(e.error);
      }
    };
    const client = new RetroArchClient({
      ...options,
      onEvent,
      onOutput: () => {
        if (!scheduled) {
          scheduled = true;
          queueMicrotask(flush);
        }
      },
    });
    const timer = setInterval(() => client.tick(performance.now()), 100);
    timer.unref();
    socket.on('data', (chunk: Buffer) => {
      client.receive(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), performance.now());
      flush();
    });
    socket.on('close', () => {
      clearInterval(timer);
      client.connectionClosed();
      resolveClosed(client.error);
    });
    socket.once('error', (err) => {
      if (client.state === 'idle') reject(new RetroArchError('closed', err.message));
    });
    socket.once('connect', () => {
      if (opening !== undefined) socket.write(opening);
      client.start(performance.now());
      flush();
      resolve({
        client,
        socket,
        flush,
        closed,
        close: () => {
          client.disconnect();
          flush();
          socket.end();
        },
      });
    });
  });
}

/** A client connected to a {@link listenRetroArchHost} server. */
export interface RetroArchHostSocket {
  /** The sans-I/O host side of this client's connection: its state and events. */
  readonly host: RetroArchHostConnection;
  /** The client's TCP socket; ended when the connection closes. */
  readonly socket: Socket;
  /** Relays whole frames from the designated peer to this client and flushes. */
  relay(bytes: Uint8Array): void;
}

/** Options of {@link listenRetroArchHost}. */
export interface ListenRetroArchHostOptions extends RetroArchAdmissionOptions {
  /** Address to listen on. Default 127.0.0.1. */
  readonly address?: string;
  /** Port (0 = any free one). */
  readonly port: number;
  /**
   * Options for each connection's {@link RetroArchHostConnection} (events go to `onEvent`), or a
   * function giving them when a client connects (e.g. the relayed session's current players).
   */
  readonly host:
    | Omit<RetroArchHostOptions, 'onEvent' | 'onOutput'>
    | (() => Omit<RetroArchHostOptions, 'onEvent' | 'onOutput'>);
  /** The session frame a new client is synchronised at. */
  readonly frame?: () => number;
  /** Every event of every connection. */
  readonly onEvent?: (connection: RetroArchHostSocket, event: RetroArchHostEvent) => void;
  /**
   * Each client's budget of frames and bytes per second (default `DEFAULT_RATE_LIMITS` of
   * @netplay/transport: 4 000 frames/s, 4 MiB/s, 2 s burst); past it the client is closed with
   * `flood`. `false` disables it.
   */
  readonly rateLimits?: RateLimits | false;
}

/**
 * Listens for RetroArch clients and runs a {@link RetroArchHostConnection} for each (client
 * numbers 1, 2, … in connection order). Resolves with the server once it listens.
 *
 * Admission: at most `maxConnections` connections; those still in the handshake are capped per
 * address and in total and closed with `timeout` after `admission.pendingTimeoutMs` (a timer
 * checks them, and ticks every connection, 4 times per timeout and at least every 250 ms);
 * password failures back off per address; each client has a rate budget. A refused or closed
 * connection gets a `closed` event with the error, then its socket is ended and destroyed.
 * @throws RangeError (rejects) for a limit out of range.
 */
export function listenRetroArchHost(options: ListenRetroArchHostOptions): Promise<Server> {
  let next = 1;
  let guard: RetroArchAdmission<RetroArchHostConnection>;
  try {
    guard = new RetroArchAdmission<RetroArchHostConnection>(options);
  } catch (e) {
    return Promise.reject(e);
  }
  const hosts = new Set<RetroArchHostConnection>();
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const h of guard.expire(now)) h.abort(guard.expiredError());
      for (const h of hosts) h.tick(now);
    },
    Math.min(250, guard.gate.limits.pendingTimeoutMs / 4),
  );
  sweep.unref();
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    const now = performance.now();
    const address = addressKey(socket.remoteAddress ?? '');
    const flush = (): void => {
      const bytes = host.takeOutput();
      if (bytes !== undefined && !socket.destroyed) socket.write(bytes);
    };
    let scheduled = false;
    const conn: RetroArchHostSocket = {
      get host() {
        return host;
      },
      socket,
      relay: (bytes) => {
        host.relay(bytes);
        flush();
      },
    };
    const hostOptions = typeof options.host === 'function' ? options.host() : options.host;
    const host = new RetroArchHostConnection(
      {
        ...hostOptions,
        clientNumber: hostOptions.clientNumber ?? next++,
        ...(options.rateLimits !== undefined ? { rateLimits: options.rateLimits } : {}),
        attempts: { limiter: guard.attempts, address },
        onEvent: (e) => {
          if (e.type === 'joined') guard.joined(host);
          options.onEvent?.(conn, e);
          if (e.type === 'closed') {
            flush();
            guard.gone(host);
            hosts.delete(host);
            socket.end(() => socket.destroy());
          }
        },
        onOutput: () => {
          if (!scheduled) {
            scheduled = true;
            queueMicrotask(() => {
              scheduled = false;
              flush();
            });
          }
        },
      },
      options.frame?.() ?? 0,
    );
    host.start(now);
    socket.on('close', () => host.connectionClosed());
    socket.on('error', () => undefined);
    const arrival = guard.arrive(host, address, now);
    if (!arrival.ok) {
      host.abort(arrival.error);
      return;
    }
    hosts.add(host);
    arrival.evicted?.abort(guard.evictedError());
    socket.on('data', (chunk: Buffer) => {
      host.receive(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), performance.now());
      flush();
    });
  });
  server.on('close', () => clearInterval(sweep));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address ?? '127.0.0.1', () => resolve(server));
  });
}
