/**
 * Node-only entry (`@netplay/retroarch/node`): the `node:net` shell around the sans-I/O client,
 * and the recorder's command.
 * @packageDocumentation
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { RetroArchClient, type RetroArchClientEvent, type RetroArchClientOptions } from './client.js';
import { RetroArchError } from './errors.js';
import { RetroArchHostConnection, type RetroArchHostEvent, type RetroArchHostOptions } from './host.js';

export { RECORD_USAGE, runRecordCommand } from './record-command.js';

/** Options of {@link connectRetroArch}. */
export interface ConnectRetroArchOptions extends Omit<RetroArchClientOptions, 'onOutput'> {
  /** Host address (default 127.0.0.1). */
  readonly host?: string;
  readonly port: number;
}

/** A {@link RetroArchClient} on a TCP socket. */
export interface RetroArchConnection {
  readonly client: RetroArchClient;
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
 */
export function connectRetroArch(options: ConnectRetroArchOptions): Promise<RetroArchConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(options.port, options.host ?? '127.0.0.1');
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
  readonly host: RetroArchHostConnection;
  readonly socket: Socket;
  /** Relays whole frames from the designated peer to this client and flushes. */
  relay(bytes: Uint8Array): void;
}

/** Options of {@link listenRetroArchHost}. */
export interface ListenRetroArchHostOptions {
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
}

/**
 * Listens for RetroArch clients and runs a {@link RetroArchHostConnection} for each (client
 * numbers 1, 2, … in connection order). Resolves with the server once it listens.
 */
export function listenRetroArchHost(options: ListenRetroArchHostOptions): Promise<Server> {
  let next = 1;
  const server = createServer((socket) => {
    socket.setNoDelay(true);
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
        onEvent: (e) => {
          options.onEvent?.(conn, e);
          if (e.type === 'closed') {
            flush();
            socket.end();
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
    socket.on('data', (chunk: Buffer) => {
      host.receive(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), performance.now());
      flush();
    });
    socket.on('close', () => host.connectionClosed());
    socket.on('error', () => undefined);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.address ?? '127.0.0.1', () => resolve(server));
  });
}
