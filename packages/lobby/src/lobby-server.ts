import { randomBytes } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import { addressKey, type Clock } from '@netplay/transport';
import {
  listenSignaling,
  type SignalingRouter,
  type SignalingServer,
  type SignalingServerOptions,
} from '@netplay/transport-webrtc/server';
import { LobbyApi, type LobbyApiOptions } from './api.js';
import { RoomFeed, type RoomFeedOptions } from './feed.js';
import { MemoryRoomStore } from './memory-store.js';
import { RedisSignalingRouter } from './redis-router.js';
import { RedisRoomStore } from './redis-store.js';
import { RelayServer, type RelayServerOptions } from './relay.js';
import type { RoomStore } from './store.js';

/** Something that routes signaling between nodes and must know the local signaling server. */
export interface AttachableRouter extends SignalingRouter {
  /**
   * Called once by {@link startLobby} with this node's signaling server, once it listens: signals
   * routed here from other nodes are delivered to the peers connected to it.
   */
  attach(server: SignalingServer): void;
}

/** Options of {@link startLobby}. */
export interface LobbyServerOptions {
  /** Port (default 0: any free port). */
  readonly port?: number;
  /** Address to bind (default `127.0.0.1`). */
  readonly host?: string;
  /** Public HTTP base URL of this node (default `http://<host>:<port>`, 127.0.0.1 for 0.0.0.0). */
  readonly publicUrl?: string;
  /**
   * A Redis URL (`redis://127.0.0.1:6379`): rooms in a `RedisRoomStore` and signaling routed by
   * a `RedisSignalingRouter`, shared with every node on the same Redis and `redisPrefix`.
   */
  readonly redis?: string;
  /** Key prefix in Redis (default `np:lobby:`). */
  readonly redisPrefix?: string;
  /** Where rooms live (default a new {@link MemoryRoomStore}, or Redis with `redis`). The server closes it. */
  readonly store?: RoomStore;
  /** Node name (default random). */
  readonly nodeId?: string;
  /** Room TTL (default 30 000 ms). */
  readonly ttlMs?: number;
  /** Further API options (caps, budgets). */
  readonly api?: Partial<Omit<LobbyApiOptions, 'store' | 'nodeId' | 'publicUrl'>>;
  /** Further feed options. */
  readonly feed?: Partial<Omit<RoomFeedOptions, 'store'>>;
  /**
   * Serve the relay on its own port instead of the main one (same `host`); its public URL is then
   * `relayPublicUrl` or `ws://<host>:<relayPort>`.
   */
  readonly relayPort?: number;
  /** The relay's public WebSocket base when it has its own port (default `ws://<host>:<relayPort>`); ignored without `relayPort`. */
  readonly relayPublicUrl?: string;
  /** Most TCP connections from one address to each HTTP port (default 64); more are cut at once. */
  readonly maxConnectionsPerAddress?: number;
  /** Relay options, or `false` for no relay. */
  readonly relay?: Partial<Omit<RelayServerOptions, 'store' | 'publicWsUrl'>> | false;
  /** Signaling options (at `/signal`), or `false` for none. */
  readonly signaling?: Omit<SignalingServerOptions, 'server' | 'path' | 'port' | 'host' | 'router'> | false;
  /** Routes signaling between nodes (e.g. `RedisSignalingRouter`); the server closes it. */
  readonly router?: AttachableRouter & {
    /** Stops the router when the node stops; `abandon` as in {@link LobbyServer.close} (leave shared state as a crash would). */
    close?(abandon?: boolean): Promise<void>;
  };
  /** Time source of every part of the node: TTLs, budgets, timeouts (default the system clock); tests pass a `ManualClock`. */
  readonly clock?: Clock;
}

/**
 * A lobby node: one `node:http` server carrying the HTTP API (`/rooms`, `/health`), the change feed
 * (`/feed`), WebRTC signaling (`/signal`, @netplay/transport-webrtc's server unchanged) and the
 * relay (`/relay/host`, `/relay/join`, `/relay/link`).
 */
export class LobbyServer {
  /** @internal Use {@link startLobby}. */
  constructor(
    private readonly http: HttpServer,
    private readonly relayHttp: HttpServer | undefined,
    /** This node's name (the `nodeId` option, else 8 random hex digits), shown as `room.node`. */
    readonly nodeId: string,
    /** This node's public HTTP base URL, without a trailing slash (the `publicUrl` option, else `http://<host>:<port>`). */
    readonly url: string,
    /** The TCP port the HTTP server listens on (the one picked when `port` was 0). */
    readonly port: number,
    /** Where this node's rooms live (memory, Redis, or the `store` option); closed by {@link LobbyServer.close}. */
    readonly store: RoomStore,
    /** The HTTP API (`/rooms`, `/health`): its stats. */
    readonly api: LobbyApi,
    /** The change feed at `/feed`: its stats. */
    readonly feed: RoomFeed,
    /** The relay (`/relay/*`), or undefined with `relay: false`. */
    readonly relay: RelayServer | undefined,
    /** The WebRTC signaling server at `/signal`, or undefined with `signaling: false`. */
    readonly signaling: SignalingServer | undefined,
    /** The signaling router (Redis), when there is one. */
    readonly router: LobbyServerOptions['router'],
  ) {}

  /** The signaling URL (`ws://…/signal`), when signaling is on. */
  get signalingUrl(): string | undefined {
    return this.signaling ? `${this.url.replace(/^http/, 'ws')}/signal` : undefined;
  }

  /**
   * Stops the node. With `abandon`, it stops like a crashed process: sockets are cut and nothing is
   * removed from the store (its rooms and placements live on until their TTL).
   */
  async close(abandon = false): Promise<void> {
    this.feed.close();
    this.api.close();
    await this.relay?.close(abandon);
    await this.signaling?.close();
    await this.router?.close?.(abandon);
    await this.store.close(abandon);
    for (const h of [this.http, this.relayHttp]) {
      if (!h) continue;
      h.closeAllConnections();
      await new Promise<void>((r) => h.close(() => r()));
    }
  }
}

/** Starts a lobby node; resolves once it listens. */
export async function startLobby(options: LobbyServerOptions = {}): Promise<LobbyServer> {
  const nodeId = options.nodeId ?? randomBytes(4).toString('hex');
  const common = {
    ...(options.redisPrefix !== undefined ? { prefix: options.redisPrefix } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  const store =
    options.store ??
    (options.redis !== undefined
      ? await RedisRoomStore.connect(options.redis, common)
      : new MemoryRoomStore(options.clock ? { clock: options.clock } : {}));
  if (options.redis !== undefined && !options.router && options.signaling !== false) {
    options = { ...options, router: await RedisSignalingRouter.connect(options.redis, { ...common, nodeId }) };
  }
  const perAddress = options.maxConnectionsPerAddress ?? 64;
  const http = await listenHttp(options.port ?? 0, options.host ?? '127.0.0.1', perAddress);
  const port = portOf(http);
  const host = options.host === undefined || options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = (options.publicUrl ?? `http://${hostPart}:${port}`).replace(/\/+$/, '');
  const relayHttp =
    options.relayPort !== undefined && options.relay !== false
      ? await listenHttp(options.relayPort, options.host ?? '127.0.0.1', perAddress)
      : undefined;
  const wsUrl = relayHttp
    ? (options.relayPublicUrl ?? `ws://${hostPart}:${portOf(relayHttp)}`).replace(/\/+$/, '')
    : url.replace(/^http/, 'ws');
  let signaling: SignalingServer | undefined;
  const sigHttp = createServer();
  if (options.signaling !== false) {
    const pending = listenSignaling({
      ...(options.signaling ?? {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.router ? { router: options.router } : {}),
      server: sigHttp,
      path: '/signal',
    });
    sigHttp.emit('listening');
    signaling = await pending;
    options.router?.attach(signaling);
  }
  const api = new LobbyApi({
    ...(options.api ?? {}),
    store,
    nodeId,
    publicUrl: url,
    signaling: signaling !== undefined,
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const feed = new RoomFeed({ ...(options.feed ?? {}), store, ...(options.clock ? { clock: options.clock } : {}) });
  const relay =
    options.relay === false
      ? undefined
      : new RelayServer({
          ...(options.relay ?? {}),
          store,
          publicWsUrl: wsUrl,
          udpHost: options.host ?? '127.0.0.1',
          ...(options.clock ? { clock: options.clock } : {}),
        });
  http.on('request', (req, res) => api.handle(req, res));
  if (relayHttp && relay) {
    relayHttp.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', connection: 'close' });
      res.end('relay: WebSocket only');
    });
    relayHttp.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/relay/')) relay.handleUpgrade(req, socket, head);
      else socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
  }
  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/feed') feed.handleUpgrade(req, socket, head);
    else if (path?.startsWith('/relay/') && relay && !relayHttp) relay.handleUpgrade(req, socket, head);
    else if (path === '/signal' && signaling) sigHttp.emit('upgrade', req, socket, head);
    else {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    }
  });
  return new LobbyServer(http, relayHttp, nodeId, url, port, store, api, feed, relay, signaling, options.router);
}

/**
 * An HTTP server with short header/request timeouts (10 s / 30 s: a socket that never completes a
 * request is cut) and at most `perAddress` connections from one address.
 */
function listenHttp(port: number, host: string, perAddress: number): Promise<HttpServer> {
  const http = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 });
  http.on('clientError', (_e, socket) => socket.destroy());
  const open = new Map<string, number>();
  http.on('connection', (socket) => {
    const key = addressKey(socket.remoteAddress ?? '?');
    const n = (open.get(key) ?? 0) + 1;
    if (n > perAddress) {
      socket.destroy();
      return;
    }
    open.set(key, n);
    socket.once('close', () => {
      const m = (open.get(key) ?? 1) - 1;
      if (m > 0) open.set(key, m);
      else open.delete(key);
    });
  });
  return new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve(http);
    });
  });
}

function portOf(http: HttpServer): number {
  const addr = http.address();
  return typeof addr === 'object' && addr ? addr.port : 0;
}
