import { createServer, type Server as HttpServer, type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { AdmissionLimits, Connection, Handler, Listener, ListenerEventMap, Unsubscribe } from '@netplay/transport';
import {
  addressKey,
  DEFAULT_ADMISSION_LIMITS,
  Emitter,
  TransportError,
  truncateCloseReason,
  validateAdmissionLimits,
  validateChannels,
} from '@netplay/transport';
import { type WebSocket, WebSocketServer } from 'ws';
import { WsCloseCode } from './close-codes.js';
import { WsConnection, type WsServerHooks } from './connection.js';
import { FrameType } from './frame.js';
import { MessageTracker, ReceiveMemory, type TrackedSocket } from './message-tracker.js';
import { attachNodeSocket, nodeSocket } from './node-socket.js';
import { type ResolvedOptions, resolveOptions, type WsConnectionOptions, wsMaxPayload } from './options.js';
import { PendingSockets } from './pending-sockets.js';
import { frameCharge } from './rate-guard.js';

/** Default {@link WsListenOptions.maxConnectionsPerAddress}: 16. */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 16;
/** Default {@link WsListenOptions.maxReceiveBufferBytes}: 32 MiB. */
export const DEFAULT_MAX_RECEIVE_BUFFER_BYTES = 32 << 20;

/** Options of {@link listen}. */
export interface WsListenOptions extends WsConnectionOptions {
  /** Port to listen on (default 0: any free port). Ignored with `server`. */
  readonly port?: number;
  /** Address to bind (default `127.0.0.1`). Ignored with `server`. */
  readonly host?: string;
  /** Accept WebSocket upgrades only on this path (default: any path). */
  readonly path?: string;
  /** An existing HTTP(S) server to attach to instead of creating one. */
  readonly server?: HttpServer;
  /**
   * Most open connections (default 64). A socket in its handshake is pending (see `admission`) and
   * takes a place only when its HELLO is accepted; one that finds the listener full (at the upgrade
   * or at its HELLO) is closed with code 4001 and a reason, and the listener emits `error` with code
   * `limit`.
   */
  readonly maxConnections?: number;
  /**
   * Most WebSocket sockets (handshaking ones included) from one source address, the host without
   * its port (default 16). Further ones are refused like `maxConnections`.
   */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Caps on pending sockets, i.e. TCP connections whose WebSocket upgrade and netplay HELLO are not
   * both done yet (default `DEFAULT_ADMISSION_LIMITS`: 64 in total, 8 per address). They do not
   * count toward `maxConnections`; see `upgradeTimeoutMs` for how long they may stay.
   */
  readonly admission?: Partial<AdmissionLimits>;
  /**
   * A socket still pending this many ms after it connected (no upgrade yet, or upgraded but its
   * HELLO not accepted) is destroyed (default `admission.pendingTimeoutMs`, 5000). With a TLS
   * `server`, this counts from the end of the TLS handshake (Node's `handshakeTimeout` bounds that
   * one). The HELLO must also come within `timeouts.connectMs` of the upgrade.
   */
  readonly upgradeTimeoutMs?: number;
  /**
   * Most bytes held in unfinished received messages, all connections together (default 32 MiB).
   * Past it, a connection whose unfinished message is above 64 KiB stops being read until the
   * total is back under (TCP backpressure; see the README).
   */
  readonly maxReceiveBufferBytes?: number;
}

/** The parts {@link listen} builds for a {@link WsListener}. */
interface ListenerParts {
  readonly wss: WebSocketServer;
  /** The HTTP server the upgrades arrive on. */
  readonly http: HttpServer;
  /** Whether `listen` created `http` (and so closes it). */
  readonly ownHttp: boolean;
  readonly resolved: ResolvedOptions;
  readonly admission: AdmissionLimits;
}

/**
 * The netplay-ws server: a `ws` WebSocketServer whose sockets become {@link WsConnection}s after
 * the HELLO/WELCOME handshake. Node only. Create it with {@link listen}.
 */
export class WsListener implements Listener {
  private readonly emitter = new Emitter<ListenerEventMap>();
  private readonly all = new Set<WsConnection>();
  private readonly open: WsConnection[] = [];
  private readonly strays = new Set<WebSocket>();
  private readonly perAddress = new Map<string, number>();
  private readonly rawOf = new Map<WsConnection, Socket>();
  private readonly connOf = new Map<Socket, WsConnection>();
  private readonly pending: PendingSockets;
  private readonly memory: ReceiveMemory;
  private closed = false;
  private readonly done: Promise<void>;
  private resolveDone: () => void = () => {};
  private readonly hooks: WsServerHooks;
  private readonly wss: WebSocketServer;
  private readonly parts: ListenerParts;
  private readonly offHttp: () => void;
  /** The cap in force on open (HELLO-accepted) connections: `options.maxConnections` or 64. Fixed for the listener's life. */
  readonly maxConnections: number;
  /** The cap in force on sockets from one host (port ignored, handshaking ones included): `options.maxConnectionsPerAddress` or 16. Fixed for the listener's life. */
  readonly maxConnectionsPerAddress: number;

  /** @internal Use {@link listen}. */
  constructor(
    parts: ListenerParts,
    private readonly options: WsListenOptions,
    /** The address clients connect to, e.g. `ws://127.0.0.1:41234`. */
    readonly url: string,
    /** The bound port. */
    readonly port: number,
  ) {
    this.parts = parts;
    this.wss = parts.wss;
    this.maxConnections = options.maxConnections ?? 64;
    this.maxConnectionsPerAddress = options.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS;
    this.pending = new PendingSockets(parts.admission, parts.resolved.clock, (raw, why) => this.dropPending(raw, why));
    this.memory = new ReceiveMemory(options.maxReceiveBufferBytes ?? DEFAULT_MAX_RECEIVE_BUFFER_BYTES);
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.hooks = {
      accepted: (conn) => {
        // Authenticated: no longer pending; from now on it counts toward maxConnections.
        const raw = this.rawOf.get(conn);
        if (raw) this.pending.release(raw);
        this.open.push(conn);
        this.emitter.emit('connection', conn);
      },
      rejected: (_conn, error) => {
        this.emitter.emit('error', error);
      },
      closed: (conn) => {
        this.all.delete(conn);
        const raw = this.rawOf.get(conn);
        if (raw) this.connOf.delete(raw);
        this.rawOf.delete(conn);
        const i = this.open.indexOf(conn);
        if (i >= 0) this.open.splice(i, 1);
      },
    };
    // The gate sits on the raw connections of the HTTP server (after TLS, with an https server).
    const rawEvent = parts.http instanceof TlsServer ? 'secureConnection' : 'connection';
    const onRaw = (socket: Socket) => {
      if (this.closed) socket.destroy();
      else this.pending.admit(socket);
    };
    // A plain HTTP request is the HTTP server's business (ours answers 426 and closes): not pending.
    const onRequest = (req: IncomingMessage) => this.pending.release(req.socket);
    parts.http.on(rawEvent, onRaw);
    parts.http.on('request', onRequest);
    this.offHttp = () => {
      parts.http.off(rawEvent, onRaw);
      parts.http.off('request', onRequest);
    };
    this.wss.on('connection', (ws, req) => this.onSocket(ws, req));
    this.wss.on('error', (error) => {
      if (!this.closed) this.emitter.emit('error', new TransportError('io', `server error: ${error.message}`));
    });
  }

  get localAddress(): string {
    return this.url;
  }

  get connections(): readonly Connection[] {
    return this.open;
  }

  /** Sockets currently held: handshaking and open connections. */
  get socketCount(): number {
    return this.all.size;
  }

  /** TCP sockets that have not finished the WebSocket upgrade (counted apart; see `admission`). */
  get pendingSocketCount(): number {
    return this.pending.count;
  }

  /** Bytes held now in unfinished received messages, all connections together. */
  get receiveBufferBytes(): number {
    return this.memory.total;
  }

  /** Connections not being read now because the unfinished messages are past `maxReceiveBufferBytes`. */
  get pausedSocketCount(): number {
    return this.memory.pausedCount;
  }

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  close(reason = 'listener closed'): void {
    if (this.closed) return;
    this.closed = true;
    for (const conn of [...this.all]) conn.close(reason);
    for (const ws of this.strays) ws.terminate();
    this.pending.drain();
    this.offHttp();
    if (this.parts.ownHttp) {
      this.wss.close();
      this.parts.http.close(() => this.resolveDone());
    } else {
      this.wss.close(() => this.resolveDone());
    }
    try {
      this.emitter.emit('close', undefined);
    } finally {
      this.emitter.clear();
    }
  }

  /** Resolves once the server has stopped and (when it created one) its HTTP server closed. */
  whenClosed(): Promise<void> {
    return this.done;
  }

  /** A pending socket is destroyed: if it had upgraded, its connection reports why (listener `error`). */
  private dropPending(raw: Socket, why: 'evicted' | 'timeout'): void {
    const conn = this.connOf.get(raw);
    if (!conn) return;
    const error =
      why === 'timeout'
        ? new TransportError('timeout', `no handshake within ${this.parts.admission.pendingTimeoutMs} ms of connecting`)
        : new TransportError('limit', 'evicted: too many pending connections');
    conn.fail(error, why === 'timeout' ? WsCloseCode.timeout : WsCloseCode.refused);
  }

  private fullReason(): string {
    return `listener full (${this.maxConnections} connections)`;
  }

  private refuse(ws: WebSocket, address: string, reason: string): void {
    this.strays.add(ws);
    ws.on('error', () => {});
    ws.on('close', () => this.strays.delete(ws));
    ws.close(WsCloseCode.refused, truncateCloseReason(reason));
    const t = setTimeout(() => ws.terminate(), 1000);
    ws.on('close', () => clearTimeout(t));
    if (!this.closed) this.emitter.emit('error', new TransportError('limit', `refused ${address}: ${reason}`));
  }

  private onSocket(ws: WebSocket, req: IncomingMessage): void {
    // The socket stays pending (in the admission gate, with its timeout) until its HELLO is accepted.
    const raw = req.socket;
    const address = `${raw.remoteAddress ?? '?'}:${raw.remotePort ?? '?'}`;
    const key = addressKey(raw.remoteAddress ?? '?');
    if (this.closed) {
      this.refuse(ws, address, 'listener closed');
      return;
    }
    if (this.open.length >= this.maxConnections) {
      this.refuse(ws, address, this.fullReason());
      return;
    }
    const fromAddress = this.perAddress.get(key) ?? 0;
    if (fromAddress >= this.maxConnectionsPerAddress) {
      this.refuse(ws, address, `too many connections from ${key} (${this.maxConnectionsPerAddress})`);
      return;
    }
    const resolved = this.parts.resolved;
    const conn = new WsConnection(nodeSocket(ws), 'server', address, this.options, this.hooks);
    this.all.add(conn);
    this.rawOf.set(conn, raw);
    this.connOf.set(raw, conn);
    this.perAddress.set(key, fromAddress + 1);
    // Checked again at the HELLO (before the core answers it): handshaking sockets are pending, not
    // connections, so several may race for the last place.
    ws.on('message', (data, isBinary) => {
      if (!isBinary || conn.state !== 'connecting' || this.open.length < this.maxConnections) return;
      const first = Array.isArray(data) ? data[0]?.[0] : new Uint8Array(data as ArrayBuffer | Buffer)[0];
      if (first !== FrameType.hello) return;
      conn.fail(new TransportError('limit', this.fullReason()), WsCloseCode.refused);
    });
    const tracked: TrackedSocket = {
      tracker: new MessageTracker(),
      pause: () => raw.pause(),
      resume: () => raw.resume(),
    };
    this.memory.add(tracked);
    raw.on('data', (chunk: Buffer) => this.memory.feed(tracked, chunk, resolved.clock.now()));
    ws.on('close', () => {
      this.memory.remove(tracked);
      const n = (this.perAddress.get(key) ?? 1) - 1;
      if (n > 0) this.perAddress.set(key, n);
      else this.perAddress.delete(key);
    });
    attachNodeSocket(ws, conn, frameCharge(conn, resolved.rateLimits, resolved.clock));
  }
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new TransportError('invalid-argument', `${what} must be a positive integer`);
  return value;
}

function admissionLimits(options: WsListenOptions): AdmissionLimits {
  const limits: AdmissionLimits = {
    ...DEFAULT_ADMISSION_LIMITS,
    ...options.admission,
    ...(options.upgradeTimeoutMs === undefined ? {} : { pendingTimeoutMs: options.upgradeTimeoutMs }),
  };
  try {
    return validateAdmissionLimits(limits);
  } catch (e) {
    throw new TransportError('invalid-argument', (e as Error).message, { cause: e });
  }
}

/**
 * Starts a netplay-ws server. Resolves once it listens.
 *
 * ```ts
 * const listener = await listen({ port: 8080, channels: [{ name: 'input', kind: 'reliable' }] });
 * listener.on('connection', (conn) => conn.on('message', (m) => conn.send(m.channel, m.data)));
 * ```
 * @throws TransportError `invalid-argument` for bad options, `io` when the port cannot be bound.
 */
export function listen(options: WsListenOptions): Promise<WsListener> {
  const resolved = resolveOptions(options, validateChannels(options.channels));
  positiveInteger(options.maxConnections, 64, 'maxConnections');
  positiveInteger(options.maxConnectionsPerAddress, 1, 'maxConnectionsPerAddress');
  positiveInteger(options.maxReceiveBufferBytes, 1, 'maxReceiveBufferBytes');
  const admission = admissionLimits(options);
  const maxPayload = wsMaxPayload(resolved);
  return new Promise((resolve, reject) => {
    const ownHttp = options.server === undefined;
    const http =
      options.server ??
      createServer((_req, res) => {
        const body = STATUS_CODES[426] ?? 'Upgrade Required';
        res.writeHead(426, { 'Content-Length': body.length, 'Content-Type': 'text/plain', Connection: 'close' });
        res.end(body);
      });
    const wss = new WebSocketServer({
      maxPayload,
      perMessageDeflate: false,
      clientTracking: false,
      server: http,
      ...(options.path ? { path: options.path } : {}),
    });
    const parts: ListenerParts = { wss, http, ownHttp, resolved, admission };
    const fail = (error: Error) => {
      wss.close();
      if (ownHttp) http.close();
      reject(new TransportError('io', `cannot listen: ${error.message}`, { cause: error }));
    };
    const ready = () => {
      http.off('error', fail);
      const addr = http.address();
      if (typeof addr === 'string' || addr === null) {
        resolve(new WsListener(parts, options, `ws+unix://${addr ?? '?'}`, 0));
        return;
      }
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve(new WsListener(parts, options, `ws://${host}:${addr.port}${options.path ?? ''}`, addr.port));
    };
    http.once('error', fail);
    if (http.listening) ready();
    else if (ownHttp) http.listen(options.port ?? 0, options.host ?? '127.0.0.1', ready);
    else http.once('listening', ready);
  });
}
