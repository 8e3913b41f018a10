import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Connection, Handler, Listener, ListenerEventMap, Unsubscribe } from '@netplay/transport';
import { Emitter, TransportError, truncateCloseReason, validateChannels } from '@netplay/transport';
import { type WebSocket, WebSocketServer } from 'ws';
import { WsCloseCode } from './close-codes.js';
import { WsConnection, type WsServerHooks } from './connection.js';
import { attachNodeSocket, nodeSocket } from './node-socket.js';
import { resolveOptions, type WsConnectionOptions, wsMaxPayload } from './options.js';

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
   * Most sockets at once, handshaking ones included (default 64). Further clients are closed with
   * code 4001 and a reason, and the listener emits `error` with code `limit`.
   */
  readonly maxConnections?: number;
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
  private closed = false;
  private readonly done: Promise<void>;
  private resolveDone: () => void = () => {};
  private readonly hooks: WsServerHooks;
  readonly maxConnections: number;

  /** @internal Use {@link listen}. */
  constructor(
    private readonly wss: WebSocketServer,
    private readonly options: WsListenOptions,
    /** The address clients connect to, e.g. `ws://127.0.0.1:41234`. */
    readonly url: string,
    /** The bound port. */
    readonly port: number,
  ) {
    this.maxConnections = options.maxConnections ?? 64;
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.hooks = {
      accepted: (conn) => {
        this.open.push(conn);
        this.emitter.emit('connection', conn);
      },
      rejected: (_conn, error) => {
        this.emitter.emit('error', error);
      },
      closed: (conn) => {
        this.all.delete(conn);
        const i = this.open.indexOf(conn);
        if (i >= 0) this.open.splice(i, 1);
      },
    };
    wss.on('connection', (ws, req) => this.onSocket(ws, req));
    wss.on('error', (error) => {
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

  on<K extends keyof ListenerEventMap>(type: K, handler: Handler<ListenerEventMap, K>): Unsubscribe {
    return this.emitter.on(type, handler);
  }

  close(reason = 'listener closed'): void {
    if (this.closed) return;
    this.closed = true;
    for (const conn of [...this.all]) conn.close(reason);
    for (const ws of this.strays) ws.terminate();
    this.wss.close(() => this.resolveDone());
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

  private onSocket(ws: WebSocket, req: IncomingMessage): void {
    const address = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    if (this.closed || this.all.size >= this.maxConnections) {
      const reason = this.closed ? 'listener closed' : `listener full (${this.maxConnections} connections)`;
      this.strays.add(ws);
      ws.on('error', () => {});
      ws.on('close', () => this.strays.delete(ws));
      ws.close(WsCloseCode.refused, truncateCloseReason(reason));
      const t = setTimeout(() => ws.terminate(), 1000);
      ws.on('close', () => clearTimeout(t));
      if (!this.closed) this.emitter.emit('error', new TransportError('limit', `refused ${address}: ${reason}`));
      return;
    }
    const conn = new WsConnection(nodeSocket(ws), 'server', address, this.options, this.hooks);
    this.all.add(conn);
    attachNodeSocket(ws, conn);
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
  const max = options.maxConnections ?? 64;
  if (!Number.isInteger(max) || max < 1) {
    throw new TransportError('invalid-argument', 'maxConnections must be a positive integer');
  }
  const maxPayload = wsMaxPayload(resolved);
  return new Promise((resolve, reject) => {
    const common = {
      maxPayload,
      perMessageDeflate: false,
      clientTracking: false,
      ...(options.path ? { path: options.path } : {}),
    };
    const wss = options.server
      ? new WebSocketServer({ ...common, server: options.server })
      : new WebSocketServer({ ...common, host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
    const fail = (error: Error) => {
      wss.close();
      reject(new TransportError('io', `cannot listen: ${error.message}`, { cause: error }));
    };
    const ready = () => {
      wss.off('error', fail);
      const addr = wss.address();
      if (typeof addr === 'string' || addr === null) {
        resolve(new WsListener(wss, options, `ws+unix://${addr ?? '?'}`, 0));
        return;
      }
      const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve(new WsListener(wss, options, `ws://${host}:${addr.port}${options.path ?? ''}`, addr.port));
    };
    wss.once('error', fail);
    if (options.server?.listening) ready();
    else wss.once('listening', ready);
  });
}
