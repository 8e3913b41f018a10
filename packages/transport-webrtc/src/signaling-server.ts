import { createServer, type Server as HttpServer, type IncomingMessage, STATUS_CODES } from 'node:http';
import {
  AdmissionGate,
  type AdmissionLimits,
  addressKey,
  type Clock,
  DEFAULT_ADMISSION_LIMITS,
  RateBudget,
  type RateLimits,
  systemClock,
  type Timer,
  validateAdmissionLimits,
  validateRateLimits,
} from '@netplay/transport';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { isIpLiteral } from './remote-address.js';
import type { PeerSignal } from './rtc.js';
import {
  encodeMessage,
  parseClientMessage,
  type ServerMessage,
  SignalingError,
  type SignalingErrorCode,
} from './signal-protocol.js';

/** WebSocket close codes the signaling server sends. */
export const SignalingCloseCode = {
  /** No `join` within `admission.pendingTimeoutMs`. */
  timeout: 4000,
  /** A fatal refusal (room full, name taken, limits). */
  refused: 4001,
  /** A malformed message (bad JSON, bad fields, wrong version, binary). */
  protocol: 4002,
  /** Over the message budget. */
  flood: 4004,
} as const;

/** The default signaling budget per socket: 20 messages and 64 KiB a second, bursts of 5 s. */
export const DEFAULT_SIGNALING_RATE_LIMITS: RateLimits = Object.freeze({
  messagesPerSecond: 20,
  bytesPerSecond: 64 << 10,
  burstSeconds: 5,
});

/** Options of {@link listenSignaling}. */
export interface SignalingServerOptions {
  /** Port (default 0: any free port). Ignored with `server`. */
  readonly port?: number;
  /** Address to bind (default `127.0.0.1`). Ignored with `server`. */
  readonly host?: string;
  /** Accept upgrades only on this path (default any). */
  readonly path?: string;
  /** An existing HTTP(S) server to attach to (e.g. for TLS). */
  readonly server?: HttpServer;
  /** Largest message in bytes (default 32 KiB); a larger one closes the socket (1009, from `ws`). */
  readonly maxMessageBytes?: number;
  /** Most sockets at once (default 1024). */
  readonly maxSockets?: number;
  /** Most rooms at once (default 1024). */
  readonly maxRooms?: number;
  /** Most peers in one room (default 16). */
  readonly maxPeersPerRoom?: number;
  /** Most rooms one address may hold open (rooms it created that still exist; default 8). */
  readonly maxRoomsPerAddress?: number;
  /** Most joined peers from one address (default 32). */
  readonly maxPeersPerAddress?: number;
  /** Sockets that have not joined yet: per address, in total, and how long (default 8, 64, 5 s). */
  readonly admission?: Partial<AdmissionLimits>;
  /** Per-socket message budget (default {@link DEFAULT_SIGNALING_RATE_LIMITS}); `false` disables it. */
  readonly rateLimits?: RateLimits | false;
  /** Time source (default the system clock). */
  readonly clock?: Clock;
  /**
   * Scale-out hook: peers of the same room connected to other signaling servers (nodes). Without
   * it the server knows only its own sockets. With it, the server lists the router's remote peers
   * in `joined`, counts them for `name-taken` and `room-full`, forwards signals addressed to them
   * through `forward`, and tells the router when its own peers join and leave. The router feeds
   * the other direction through {@link SignalingServer.deliver}, {@link SignalingServer.remoteJoined}
   * and {@link SignalingServer.remoteLeft}.
   */
  readonly router?: SignalingRouter;
}

/** Routes signaling between nodes; see {@link SignalingServerOptions.router}. */
export interface SignalingRouter {
  /** The peers of `room` on other nodes now (synchronous: the router keeps its own view). */
  remotePeers(room: string): readonly string[];
  /** A peer of this server joined `room`. */
  joined(room: string, peer: string): void;
  /** A peer of this server left `room` (or its socket closed). */
  left(room: string, peer: string): void;
  /**
   * Carries `signal` from `from` (here) to `to`, one of `remotePeers(room)`, with `address`, the
   * IP this server saw `from` connect from (pass it on to `deliver` so the receiver gets it).
   */
  forward(room: string, from: string, to: string, signal: PeerSignal, address?: string): void;
}

/** The `address` stamp of a peer's signals: its socket IP (`addressKey`), when that is an IP. */
function stampOf(peer: Peer): { address?: string } {
  return isIpLiteral(peer.key) ? { address: peer.key } : {};
}

interface Peer {
  readonly ws: WebSocket;
  readonly key: string;
  readonly budget: RateBudget | undefined;
  room: Room | undefined;
  name: string;
  closed: boolean;
}

interface Room {
  readonly name: string;
  readonly peers: Map<string, Peer>;
  readonly creator: string;
}

/** Counters of a {@link SignalingServer}. */
export interface SignalingServerStats {
  /** Signals relayed from one peer to another. */
  relayed: number;
  /** Refusals sent, by code. */
  readonly refused: Partial<Record<SignalingErrorCode, number>>;
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new SignalingError('bad-message', `${what} must be a positive integer`);
  return value;
}

/**
 * The netplay-webrtc signaling server (Node, on `ws`): peers join rooms by name and relay offers,
 * answers and ICE candidates to named peers of their own room. It holds no game data. Every socket
 * has a message budget; sockets that have not joined go through an `AdmissionGate`; rooms, peers
 * per room, rooms and peers per address and message size are capped. Anything a peer sends that
 * breaks the protocol gets a typed `refused` message and the socket is closed; nobody else notices.
 */
export class SignalingServer {
  private readonly rooms = new Map<string, Room>();
  private readonly roomsByAddress = new Map<string, number>();
  private readonly peersByAddress = new Map<string, number>();
  private readonly sockets = new Set<Peer>();
  private readonly gate: AdmissionGate<Peer>;
  private readonly expired: Peer[] = [];
  private readonly clock: Clock;
  private readonly limits: {
    maxSockets: number;
    maxRooms: number;
    maxPeersPerRoom: number;
    maxRoomsPerAddress: number;
    maxPeersPerAddress: number;
    rateLimits: RateLimits | false;
  };
  private sweepTimer: Timer | undefined;
  private closed = false;
  private readonly router: SignalingRouter | undefined;
  /** Counters. */
  readonly stats: SignalingServerStats = { relayed: 0, refused: {} };

  /** @internal Use {@link listenSignaling}. */
  constructor(
    private readonly wss: WebSocketServer,
    private readonly http: HttpServer,
    private readonly ownHttp: boolean,
    options: SignalingServerOptions,
    /** The URL clients connect to, e.g. `ws://127.0.0.1:41234`. */
    readonly url: string,
    /** The bound port. */
    readonly port: number,
  ) {
    this.clock = options.clock ?? systemClock;
    this.router = options.router;
    this.limits = {
      maxSockets: positiveInteger(options.maxSockets, 1024, 'maxSockets'),
      maxRooms: positiveInteger(options.maxRooms, 1024, 'maxRooms'),
      maxPeersPerRoom: positiveInteger(options.maxPeersPerRoom, 16, 'maxPeersPerRoom'),
      maxRoomsPerAddress: positiveInteger(options.maxRoomsPerAddress, 8, 'maxRoomsPerAddress'),
      maxPeersPerAddress: positiveInteger(options.maxPeersPerAddress, 32, 'maxPeersPerAddress'),
      rateLimits:
        options.rateLimits === false ? false : validateRateLimits(options.rateLimits ?? DEFAULT_SIGNALING_RATE_LIMITS),
    };
    this.gate = new AdmissionGate<Peer>(validateAdmissionLimits({ ...DEFAULT_ADMISSION_LIMITS, ...options.admission }));
    wss.on('connection', (ws, req) => this.onSocket(ws, req));
    wss.on('error', () => {});
  }

  /** Rooms open now. */
  get roomCount(): number {
    return this.rooms.size;
  }

  /** Sockets open now (joined or not). */
  get socketCount(): number {
    return this.sockets.size;
  }

  /** Sockets that have not joined a room yet. */
  get pendingCount(): number {
    return this.gate.pending;
  }

  /** The names of the peers in `room` (for tests and monitoring). */
  peersIn(room: string): readonly string[] {
    return [...(this.rooms.get(room)?.peers.keys() ?? [])];
  }

  /**
   * Router side: delivers a signal from `from` (on another node) to the local peer `to` of `room`,
   * stamped with `address` (the IP the other node saw `from` at, as `forward` got it) if it is one.
   * Returns false when no such local peer exists.
   */
  deliver(room: string, from: string, to: string, signal: PeerSignal, address?: string): boolean {
    const target = this.rooms.get(room)?.peers.get(to);
    if (!target) return false;
    this.stats.relayed++;
    const stamp = address !== undefined && isIpLiteral(address) ? { address } : {};
    this.write(target, { v: 1, type: 'signal', from, signal, ...stamp });
    return true;
  }

  /** Router side: `peer` joined `room` on another node; local peers of the room get `peer-joined`. */
  remoteJoined(room: string, peer: string): void {
    const r = this.rooms.get(room);
    if (!r || r.peers.has(peer)) return;
    for (const other of r.peers.values()) this.write(other, { v: 1, type: 'peer-joined', peer });
  }

  /** Router side: `peer` left `room` on another node; local peers of the room get `peer-left`. */
  remoteLeft(room: string, peer: string): void {
    const r = this.rooms.get(room);
    if (!r || r.peers.has(peer)) return;
    for (const other of r.peers.values()) this.write(other, { v: 1, type: 'peer-left', peer });
  }

  /** Closes every socket and stops listening. Resolves once the server is closed. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.sweepTimer?.cancel();
    for (const p of [...this.sockets]) p.ws.terminate();
    this.gate.drain();
    return new Promise((resolve) => {
      this.wss.close(() => {
        if (this.ownHttp) this.http.close(() => resolve());
        else resolve();
      });
    });
  }

  private onSocket(ws: WebSocket, req: IncomingMessage): void {
    const key = addressKey(req.socket.remoteAddress ?? '?');
    const now = this.clock.now();
    const peer: Peer = {
      ws,
      key,
      budget: this.limits.rateLimits === false ? undefined : new RateBudget(this.limits.rateLimits, now),
      room: undefined,
      name: '',
      closed: false,
    };
    ws.on('error', () => {});
    ws.on('close', () => this.drop(peer));
    if (this.closed || this.sockets.size >= this.limits.maxSockets) {
      this.sockets.add(peer);
      this.refuse(peer, 'limit', `server full (${this.limits.maxSockets} sockets)`, true);
      return;
    }
    const admitted = this.gate.admit(key, peer, now);
    if (!admitted.ok) {
      this.sockets.add(peer);
      this.refuse(peer, 'limit', `too many sockets from ${key} waiting to join`, true);
      return;
    }
    this.sockets.add(peer);
    if (admitted.evicted) this.refuse(admitted.evicted, 'limit', 'evicted: too many sockets waiting to join', true);
    this.armSweep();
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(peer, data, isBinary));
  }

  private onMessage(peer: Peer, data: RawData, isBinary: boolean): void {
    if (peer.closed) return;
    const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as ArrayBuffer).byteLength;
    if (peer.budget && !peer.budget.take(size, this.clock.now())) {
      this.refuse(peer, 'flood', peer.budget.describe(), true, SignalingCloseCode.flood);
      return;
    }
    if (isBinary) {
      this.refuse(peer, 'bad-json', 'binary messages are not part of the signaling protocol', true);
      return;
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(
        Array.isArray(data) ? Buffer.concat(data) : new Uint8Array(data as ArrayBuffer),
      );
    } catch {
      this.refuse(peer, 'bad-json', 'the message is not UTF-8', true);
      return;
    }
    let msg: ReturnType<typeof parseClientMessage>;
    try {
      msg = parseClientMessage(text);
    } catch (e) {
      const error = e instanceof SignalingError ? e : new SignalingError('bad-message', String(e));
      this.refuse(peer, error.code, error.message, true);
      return;
    }
    switch (msg.type) {
      case 'join':
        this.join(peer, msg.room, msg.peer);
        return;
      case 'signal': {
        const room = peer.room;
        if (!room) {
          this.refuse(peer, 'not-joined', 'signal before join', true);
          return;
        }
        const target = room.peers.get(msg.to);
        if (!target && msg.to !== peer.name && this.router?.remotePeers(room.name).includes(msg.to)) {
          this.stats.relayed++;
          this.router.forward(room.name, peer.name, msg.to, msg.signal, stampOf(peer).address);
          return;
        }
        if (!target || target === peer) {
          this.refuse(peer, 'unknown-peer', `no peer "${msg.to}" in this room`, false);
          return;
        }
        this.stats.relayed++;
        // Stamped with the sender's socket IP: the receiver's fallback remote address.
        this.write(target, { v: 1, type: 'signal', from: peer.name, signal: msg.signal, ...stampOf(peer) });
        return;
      }
      case 'leave':
        if (!peer.room) {
          this.refuse(peer, 'not-joined', 'leave before join', true);
          return;
        }
        this.leaveRoom(peer);
        peer.ws.close(1000, 'left');
        return;
    }
  }

  private join(peer: Peer, roomName: string, name: string): void {
    if (peer.room) {
      this.refuse(peer, 'already-joined', `already in room "${peer.room.name}"`, true);
      return;
    }
    if ((this.peersByAddress.get(peer.key) ?? 0) >= this.limits.maxPeersPerAddress) {
      this.refuse(peer, 'limit', `too many peers from ${peer.key} (${this.limits.maxPeersPerAddress})`, true);
      return;
    }
    const remote = this.router?.remotePeers(roomName) ?? [];
    if (remote.includes(name)) {
      this.refuse(peer, 'name-taken', `"${name}" is taken in room "${roomName}"`, true);
      return;
    }
    let room = this.rooms.get(roomName);
    if (room || remote.length > 0) {
      if (room?.peers.has(name)) {
        this.refuse(peer, 'name-taken', `"${name}" is taken in room "${roomName}"`, true);
        return;
      }
      if ((room?.peers.size ?? 0) + remote.length >= this.limits.maxPeersPerRoom) {
        this.refuse(peer, 'room-full', `room "${roomName}" is full (${this.limits.maxPeersPerRoom} peers)`, true);
        return;
      }
    }
    if (!room) {
      if (this.rooms.size >= this.limits.maxRooms) {
        this.refuse(peer, 'limit', `too many rooms (${this.limits.maxRooms})`, true);
        return;
      }
      if ((this.roomsByAddress.get(peer.key) ?? 0) >= this.limits.maxRoomsPerAddress) {
        this.refuse(peer, 'limit', `too many rooms from ${peer.key} (${this.limits.maxRoomsPerAddress})`, true);
        return;
      }
      room = { name: roomName, peers: new Map(), creator: peer.key };
      this.rooms.set(roomName, room);
      this.roomsByAddress.set(peer.key, (this.roomsByAddress.get(peer.key) ?? 0) + 1);
    }
    this.gate.release(peer);
    this.peersByAddress.set(peer.key, (this.peersByAddress.get(peer.key) ?? 0) + 1);
    const others = [...room.peers.keys(), ...remote];
    room.peers.set(name, peer);
    peer.room = room;
    peer.name = name;
    this.write(peer, { v: 1, type: 'joined', room: roomName, peer: name, peers: others });
    for (const other of room.peers.values()) {
      if (other !== peer) this.write(other, { v: 1, type: 'peer-joined', peer: name });
    }
    this.router?.joined(roomName, name);
  }

  private leaveRoom(peer: Peer): void {
    const room = peer.room;
    if (!room) return;
    peer.room = undefined;
    room.peers.delete(peer.name);
    this.router?.left(room.name, peer.name);
    const n = (this.peersByAddress.get(peer.key) ?? 1) - 1;
    if (n > 0) this.peersByAddress.set(peer.key, n);
    else this.peersByAddress.delete(peer.key);
    if (room.peers.size === 0) {
      this.rooms.delete(room.name);
      const r = (this.roomsByAddress.get(room.creator) ?? 1) - 1;
      if (r > 0) this.roomsByAddress.set(room.creator, r);
      else this.roomsByAddress.delete(room.creator);
      return;
    }
    for (const other of room.peers.values()) this.write(other, { v: 1, type: 'peer-left', peer: peer.name });
  }

  private drop(peer: Peer): void {
    peer.closed = true;
    this.gate.release(peer);
    this.sockets.delete(peer);
    this.leaveRoom(peer);
  }

  private write(peer: Peer, msg: ServerMessage): void {
    if (peer.closed) return;
    peer.ws.send(encodeMessage(msg));
  }

  private refuse(
    peer: Peer,
    code: SignalingErrorCode,
    reason: string,
    fatal: boolean,
    closeCode: number = code === 'bad-json' || code === 'bad-message' || code === 'version' || code === 'not-joined'
      ? SignalingCloseCode.protocol
      : code === 'timeout'
        ? SignalingCloseCode.timeout
        : SignalingCloseCode.refused,
  ): void {
    if (peer.closed) return;
    this.stats.refused[code] = (this.stats.refused[code] ?? 0) + 1;
    this.write(peer, { v: 1, type: 'refused', code, reason, fatal });
    if (!fatal) return;
    peer.closed = true;
    this.gate.release(peer);
    this.leaveRoom(peer);
    peer.ws.close(closeCode, code);
    const t = setTimeout(() => peer.ws.terminate(), 1000);
    peer.ws.once('close', () => clearTimeout(t));
  }

  private armSweep(): void {
    if (this.sweepTimer || this.closed) return;
    const period = Math.max(20, Math.min(500, this.gate.limits.pendingTimeoutMs / 10));
    this.sweepTimer = this.clock.setTimer(period, () => {
      this.sweepTimer = undefined;
      this.expired.length = 0;
      for (const p of this.gate.expire(this.clock.now(), this.expired)) {
        this.refuse(p, 'timeout', `no join within ${this.gate.limits.pendingTimeoutMs} ms`, true);
      }
      this.expired.length = 0;
      if (this.gate.pending > 0) this.armSweep();
    });
  }
}

/**
 * Starts a signaling server; resolves once it listens.
 *
 * ```ts
 * const server = await listenSignaling({ port: 8787, host: '0.0.0.0' });
 * console.log(server.url); // ws://0.0.0.0:8787
 * ```
 * Throws {@link SignalingError} (`bad-message`) for bad options; rejects when the port cannot be bound.
 */
export function listenSignaling(options: SignalingServerOptions = {}): Promise<SignalingServer> {
  const maxPayload = positiveInteger(options.maxMessageBytes, 32 << 10, 'maxMessageBytes');
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
      server: http,
      maxPayload,
      perMessageDeflate: false,
      clientTracking: false,
      ...(options.path ? { path: options.path } : {}),
    });
    // ws re-emits the HTTP server's errors (EADDRINUSE...) on the WebSocketServer: without a
    // listener that is an unhandled 'error' that kills the process. The HTTP listener rejects.
    wss.on('error', () => {});
    const fail = (error: Error) => {
      wss.close();
      if (ownHttp) http.close();
      reject(error);
    };
    const ready = () => {
      http.off('error', fail);
      const addr = http.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      const host =
        typeof addr === 'object' && addr ? (addr.family === 'IPv6' ? `[${addr.address}]` : addr.address) : '?';
      try {
        resolve(new SignalingServer(wss, http, ownHttp, options, `ws://${host}:${port}${options.path ?? ''}`, port));
      } catch (e) {
        fail(e as Error);
      }
    };
    http.once('error', fail);
    if (http.listening) ready();
    else if (ownHttp) http.listen(options.port ?? 0, options.host ?? '127.0.0.1', ready);
    else http.once('listening', ready);
  });
}
