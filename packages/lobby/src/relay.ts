import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { AdmissionGate, addressKey, type Clock, systemClock, type Timer } from '@netplay/transport';
import { type WebSocket, WebSocketServer } from 'ws';
import { hashToken } from './api.js';
import { LobbyError, type LobbyErrorCode } from './errors.js';
import { ByteBucket, type PipeStats, pipeSockets } from './pipe.js';
import { decodePlacement, encodePlacement, type RelayPlacement } from './placement.js';
import { checkRoomId } from './room.js';
import type { RoomStore } from './store.js';
import { UdpRelay, type UdpRelayOptions, type UdpRoomStats } from './udp-relay.js';

/** WebSocket close codes of the relay. */
export const RelayCloseCode = {
  /** A client whose host did not open its link within `linkTimeoutMs`. */
  timeout: 4000,
  /** Refused: caps, unknown room, wrong token. */
  refused: 4001,
  /** A malformed request or control message. */
  protocol: 4002,
  /** The room's relay is on another node; the reason is that node's relay URL. */
  elsewhere: 4003,
} as const;

/**
 * Relay control messages (JSON text, server → host on the `/relay/host` socket):
 * `{"v":1,"type":"registered","room":"…"}` once the host is registered, and
 * `{"v":1,"type":"client","client":"c7"}` when a client connected: the host then opens
 * `/relay/link?room=…&client=c7&token=…` and the relay copies bytes between that link and the client.
 * The host sends nothing on the control socket: a message from it unregisters the room.
 */
export type RelayControlMessage =
  | {
      /** The relay control protocol version: always 1. */
      readonly v: 1;
      /** `'registered'`: the host is registered; clients may join from now. */
      readonly type: 'registered';
      /** The room id registered. */
      readonly room: string;
    }
  /** Sent before `registered` when the host asked for UDP (`&udp=1`): the room's UDP port and the agent's key (hex). */
  | {
      /** The relay control protocol version: always 1. */
      readonly v: 1;
      /** `'udp'`: the room's UDP port is open. */
      readonly type: 'udp';
      /** The room's UDP port on the relay node: the host's agent sends there, clients too. */
      readonly port: number;
      /** The room key, 32 hex digits (16 bytes): the agent puts it in every datagram it sends. */
      readonly key: string;
    }
  | {
      /** The relay control protocol version: always 1. */
      readonly v: 1;
      /** `'client'`: a client connected; the host opens a link for it. */
      readonly type: 'client';
      /** The client's id within the room (`c1`, `c2`...), for the link's `client=` parameter. */
      readonly client: string;
    };

/** Options of {@link RelayServer}. */
export interface RelayServerOptions {
  /** Where the relay records each room's placement (which node holds its host) and checks room tokens. */
  readonly store: RoomStore;
  /** This node's public WebSocket base URL (`ws://host:port`), recorded as the room's relay. */
  readonly publicWsUrl: string;
  /** Per-room forwarding budget in bytes per second, both directions and all clients (default 4 MiB/s). */
  readonly bytesPerSecond?: number;
  /** Burst of that budget in bytes (default one second's worth). */
  readonly burstBytes?: number;
  /** Unsent bytes per direction of a link before its sender is paused (default 256 KiB). */
  readonly highWaterBytes?: number;
  /** Largest relayed message (default 8 MiB + 16, netplay-ws's default largest message). */
  readonly maxMessageBytes?: number;
  /** Most hosts registered on this node (default 256). */
  readonly maxRooms?: number;
  /** Most clients per room (default 16). */
  readonly maxClientsPerRoom?: number;
  /** Clients waiting for their host's link: admission caps and timeout (default 8 per address, 64, 5 s). */
  readonly pendingPerAddress?: number;
  /** Most clients waiting for their host's link on this node, all rooms together (default 64). */
  readonly maxPending?: number;
  /** How long a client waits for its host's link before it is closed, in ms (default 5000). */
  readonly linkTimeoutMs?: number;
  /** The UDP relay (a port per room whose host asks for it), or `false` (default on, bound to `udpHost`). */
  readonly udp?: UdpRelayOptions | false;
  /** Address the UDP room ports bind (default 127.0.0.1) and the host name clients are told (default `publicWsUrl`'s). */
  readonly udpHost?: string;
  /** The host name put in the room's `udp://host:port` placement for clients (default `publicWsUrl`'s host name). */
  readonly udpPublicHost?: string;
  /** TTL of the relay placement record (default 30 s, refreshed every third). */
  readonly placementTtlMs?: number;
  /** Time source of budgets, link timeouts and placement refreshes (default the system clock). */
  readonly clock?: Clock;
}

interface Client {
  readonly id: string;
  readonly ws: WebSocket;
  readonly key: string;
  linked: boolean;
  timer: Timer | undefined;
}

interface HostRoom {
  readonly id: string;
  readonly control: WebSocket;
  readonly tokenHash: string;
  readonly bucket: ByteBucket;
  readonly clients: Map<string, Client>;
  readonly stats: PipeStats;
  next: number;
}

/**
 * The lobby's WebSocket relay for hosts that cannot accept connections: a host registers its room
 * (`/relay/host?room=&token=`), clients connect by room id (`/relay/join?room=`), and for each client
 * the host opens a link (`/relay/link?room=&client=&token=`); the relay then copies WebSocket
 * messages between client and link unchanged (the netplay-ws session runs end to end through it),
 * shaped by a per-room byte budget and bounded per direction. The placement (which node holds the
 * room's host) is recorded in the store, so any node's join info points at the right relay.
 */
export class RelayServer {
  private readonly wss: WebSocketServer;
  private readonly rooms = new Map<string, HostRoom>();
  private readonly gate: AdmissionGate<Client>;
  private readonly clock: Clock;
  private readonly o: Required<
    Omit<RelayServerOptions, 'store' | 'publicWsUrl' | 'clock' | 'udp' | 'udpHost' | 'udpPublicHost'>
  >;
  private readonly udp: UdpRelay | undefined;
  private readonly udpPublicHost: string;
  /** The placement value recorded for each room hosted here. */
  private readonly placements = new Map<string, string>();
  private refreshTimer: Timer | undefined;
  private closed = false;
  /** Counters. */
  readonly stats = {
    /** Client links made since the start. */
    links: 0,
    /**
     * Payload bytes relayed over WebSocket links since the start, both directions, every room
     * (each message's bytes as sent, binary or text; the WebSocket framing not counted): the sum of
     * every room's {@link RelayServer.roomStats} `bytes`, rooms gone included. Datagrams through UDP
     * room ports are counted per room in {@link RelayServer.udpStats}, not here.
     */
    bytes: 0,
    /** Refused or closed connections (hosts, clients, links), by {@link LobbyErrorCode}. */
    refused: {} as Partial<Record<LobbyErrorCode, number>>,
  };

  constructor(private readonly options: RelayServerOptions) {
    this.clock = options.clock ?? systemClock;
    const bytesPerSecond = options.bytesPerSecond ?? 4 << 20;
    this.o = {
      bytesPerSecond,
      burstBytes: options.burstBytes ?? bytesPerSecond,
      highWaterBytes: options.highWaterBytes ?? 256 << 10,
      maxMessageBytes: options.maxMessageBytes ?? (8 << 20) + 16,
      maxRooms: options.maxRooms ?? 256,
      maxClientsPerRoom: options.maxClientsPerRoom ?? 16,
      pendingPerAddress: options.pendingPerAddress ?? 8,
      maxPending: options.maxPending ?? 64,
      linkTimeoutMs: options.linkTimeoutMs ?? 5000,
      placementTtlMs: options.placementTtlMs ?? 30_000,
    };
    this.udp =
      options.udp === false
        ? undefined
        : new UdpRelay({
            ...(options.udp ?? {}),
            host: options.udpHost ?? options.udp?.host ?? '127.0.0.1',
            ...(options.clock ? { clock: options.clock } : {}),
          });
    this.udpPublicHost = options.udpPublicHost ?? new URL(options.publicWsUrl).hostname.replace(/^\[|\]$/g, '');
    this.gate = new AdmissionGate<Client>({
      maxPending: this.o.maxPending,
      maxPendingPerAddress: this.o.pendingPerAddress,
      pendingTimeoutMs: this.o.linkTimeoutMs,
    });
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: this.o.maxMessageBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.wss.on('error', () => {});
  }

  /** The relay's public WebSocket base URL (what join info points clients at). */
  get publicUrl(): string {
    return this.options.publicWsUrl;
  }

  /** UDP counters of one room, when its host asked for UDP. */
  udpStats(room: string): Readonly<UdpRoomStats> | undefined {
    return this.udp?.roomStats(room);
  }

  /** Hosts registered here now. */
  get roomCount(): number {
    return this.rooms.size;
  }

  /** Forwarding counters of one room (bytes, messages, pauses), or undefined. */
  roomStats(room: string): Readonly<PipeStats> | undefined {
    return this.rooms.get(room)?.stats;
  }

  /** Takes over an HTTP upgrade for `/relay/host`, `/relay/join` or `/relay/link`. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => {});
      this.onSocket(ws, req).catch((e: unknown) => {
        const err = e instanceof LobbyError ? e : new LobbyError('unavailable', `store failed: ${String(e)}`);
        this.refuse(ws, err.code, err.message);
      });
    });
  }

  /** Closes every relay socket and removes this node's placements. */
  async close(abandon = false): Promise<void> {
    this.closed = true;
    this.refreshTimer?.cancel();
    const rooms = [...this.rooms.values()];
    this.rooms.clear();
    for (const r of rooms) {
      r.control.terminate();
      for (const c of r.clients.values()) c.ws.terminate();
      const placement = this.placements.get(r.id);
      if (!abandon && placement) await this.options.store.deleteRelay(r.id, placement).catch(() => {});
    }
    this.gate.drain();
    this.udp?.closeAll();
    this.wss.close();
  }

  private async onSocket(ws: WebSocket, req: IncomingMessage): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://lobby');
    const key = addressKey(req.socket.remoteAddress ?? '?');
    ws.pause();
    const room = checkRoomId(url.searchParams.get('room') ?? '');
    switch (url.pathname) {
      case '/relay/host':
        return this.onHost(ws, room, url.searchParams.get('token') ?? '', url.searchParams.get('udp') === '1');
      case '/relay/join':
        return this.onClient(ws, room, key);
      case '/relay/link':
        return this.onLink(ws, room, url.searchParams.get('client') ?? '', url.searchParams.get('token') ?? '');
      default:
        throw new LobbyError('not-found', `no relay route ${url.pathname.slice(0, 40)}`);
    }
  }

  private async onHost(ws: WebSocket, id: string, token: string, wantsUdp: boolean): Promise<void> {
    const stored = await this.options.store.get(id);
    if (!stored) throw new LobbyError('not-found', `no room ${id}`);
    if (hashToken(token) !== stored.tokenHash) throw new LobbyError('forbidden', `wrong token for room ${id}`);
    if (this.closed) throw new LobbyError('unavailable', 'relay closing');
    const old = this.rooms.get(id);
    if (!old && this.rooms.size >= this.o.maxRooms)
      throw new LobbyError('limit', `relay full (${this.o.maxRooms} rooms)`);
    if (old) this.unregister(old, 'replaced: the host registered again');
    const room: HostRoom = {
      id,
      control: ws,
      tokenHash: stored.tokenHash,
      bucket: new ByteBucket(this.o.bytesPerSecond, this.o.burstBytes, this.clock.now()),
      clients: new Map(),
      stats: { bytes: 0, messages: 0, pauses: 0 },
      next: 1,
    };
    this.rooms.set(id, room);
    ws.on('close', () => {
      if (this.rooms.get(id) === room) this.unregister(room, 'the host left');
    });
    ws.on('message', () => {
      if (this.rooms.get(id) === room) this.unregister(room, 'protocol: a host sends nothing on the control socket');
    });
    ws.resume();
    let placement: RelayPlacement = { ws: this.options.publicWsUrl };
    if (wantsUdp) {
      if (!this.udp) throw new LobbyError('bad-request', 'this relay has no UDP');
      const { port, key } = await this.udp.open(id);
      const h = this.udpPublicHost;
      placement = { ...placement, udp: `udp://${h.includes(':') ? `[${h}]` : h}:${port}` };
      ws.send(JSON.stringify({ v: 1, type: 'udp', port, key: key.toString('hex') } satisfies RelayControlMessage));
    }
    const value = encodePlacement(placement);
    this.placements.set(id, value);
    await this.options.store.setRelay(id, value, this.o.placementTtlMs);
    this.armRefresh();
    ws.send(JSON.stringify({ v: 1, type: 'registered', room: id } satisfies RelayControlMessage));
  }

  private async onClient(ws: WebSocket, id: string, key: string): Promise<void> {
    const room = this.rooms.get(id);
    if (!room) {
      const stored = await this.options.store.getRelay(id);
      const elsewhere = stored ? decodePlacement(stored)?.ws : undefined;
      if (elsewhere && elsewhere !== this.options.publicWsUrl) {
        throw new LobbyError('elsewhere', `${elsewhere}/relay/join?room=${encodeURIComponent(id)}`);
      }
      throw new LobbyError('not-found', `no relay host for room ${id}`);
    }
    if (room.clients.size >= this.o.maxClientsPerRoom) {
      throw new LobbyError('limit', `room ${id} has ${this.o.maxClientsPerRoom} relay clients`);
    }
    const client: Client = { id: `c${room.next++}`, ws, key, linked: false, timer: undefined };
    const admitted = this.gate.admit(key, client, this.clock.now());
    if (!admitted.ok) throw new LobbyError('limit', `too many relay clients from ${key} waiting for a link`);
    if (admitted.evicted) this.dropClient(admitted.evicted, 'evicted: too many clients waiting for a link');
    room.clients.set(client.id, client);
    client.timer = this.clock.setTimer(this.o.linkTimeoutMs, () => {
      if (!client.linked) this.refuse(ws, 'timeout', `the host opened no link within ${this.o.linkTimeoutMs} ms`);
    });
    ws.on('close', () => {
      client.timer?.cancel();
      this.gate.release(client);
      if (room.clients.get(client.id) === client) room.clients.delete(client.id);
    });
    room.control.send(JSON.stringify({ v: 1, type: 'client', client: client.id } satisfies RelayControlMessage));
  }

  private async onLink(ws: WebSocket, id: string, clientId: string, token: string): Promise<void> {
    const room = this.rooms.get(id);
    if (!room) throw new LobbyError('not-found', `no relay host for room ${id}`);
    if (hashToken(token) !== room.tokenHash) throw new LobbyError('forbidden', `wrong token for room ${id}`);
    const client = room.clients.get(clientId);
    if (!client || client.linked) throw new LobbyError('not-found', `no client ${clientId.slice(0, 16)} waiting`);
    client.linked = true;
    client.timer?.cancel();
    this.gate.release(client);
    this.stats.links++;
    pipeSockets(
      client.ws,
      ws,
      room.bucket,
      this.clock,
      this.o.highWaterBytes,
      room.stats,
      () => {
        room.clients.delete(client.id);
      },
      this.stats,
    );
  }

  private unregister(room: HostRoom, reason: string): void {
    this.rooms.delete(room.id);
    room.control.close(1000, reason);
    for (const c of room.clients.values()) this.dropClient(c, reason);
    this.udp?.close(room.id);
    const placement = this.placements.get(room.id);
    this.placements.delete(room.id);
    if (placement) void this.options.store.deleteRelay(room.id, placement).catch(() => {});
  }

  private dropClient(c: Client, reason: string): void {
    c.timer?.cancel();
    this.gate.release(c);
    c.ws.resume();
    c.ws.close(RelayCloseCode.refused, reason.slice(0, 120));
    const t = setTimeout(() => c.ws.terminate(), 1000);
    c.ws.once('close', () => clearTimeout(t));
  }

  private refuse(ws: WebSocket, code: LobbyErrorCode, reason: string): void {
    this.stats.refused[code] = (this.stats.refused[code] ?? 0) + 1;
    const close =
      code === 'elsewhere'
        ? RelayCloseCode.elsewhere
        : code === 'timeout'
          ? RelayCloseCode.timeout
          : code === 'bad-request'
            ? RelayCloseCode.protocol
            : RelayCloseCode.refused;
    // The reason travels in the close frame (at most 123 bytes); `elsewhere` carries the URL.
    const text = `${code}: ${reason}`;
    ws.resume(); // read the peer's closing handshake
    ws.close(close, Buffer.byteLength(text) <= 123 ? text : code);
    const t = setTimeout(() => ws.terminate(), 1000);
    ws.once('close', () => clearTimeout(t));
  }

  /** Keeps this node's placements (and the rooms' relay flag) alive in the store. */
  private armRefresh(): void {
    if (this.refreshTimer || this.closed) return;
    this.refreshTimer = this.clock.setTimer(this.o.placementTtlMs / 3, () => {
      this.refreshTimer = undefined;
      for (const r of this.rooms.values()) {
        const placement = this.placements.get(r.id);
        if (placement) void this.options.store.setRelay(r.id, placement, this.o.placementTtlMs).catch(() => {});
      }
      if (this.rooms.size > 0) this.armRefresh();
    });
  }
}
