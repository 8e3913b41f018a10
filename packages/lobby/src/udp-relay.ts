import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { type Clock, systemClock, type Timer } from '@netplay/transport';
import { ByteBucket } from './pipe.js';

/** First bytes of every datagram a host agent sends to a room port. */
export const UDP_HOST_MAGIC = Uint8Array.from([0x4e, 0x50, 0x52, 0x48]); // "NPRH"
/** Host datagram header: magic, 16-byte room key, client id u16 (0: keepalive). */
export const UDP_HOST_HEADER_BYTES = 4 + 16 + 2;
/** Relay → host datagram header: client id u16. */
export const UDP_CLIENT_HEADER_BYTES = 2;

/** Options of {@link UdpRelay}. */
export interface UdpRelayOptions {
  /** Address the room ports bind (default `127.0.0.1`). */
  readonly host?: string;
  /** Per-room budget, bytes per second both ways (default 4 MiB/s); datagrams over it are dropped. */
  readonly bytesPerSecond?: number;
  /** Most clients per room (default 16) and per address per room (default 4). */
  readonly maxClientsPerRoom?: number;
  /** Most clients from one address in one room (default 4); datagrams from a further one are dropped. */
  readonly maxClientsPerAddress?: number;
  /** A client or host agent silent this long is forgotten (default 30 s). */
  readonly idleMs?: number;
  /** Time source of the budgets and the idle rule (default the system clock). */
  readonly clock?: Clock;
}

interface UdpClient {
  readonly id: number;
  readonly address: string;
  readonly port: number;
  last: number;
}

/** Counters of one UDP room. */
export interface UdpRoomStats {
  /** Datagrams forwarded each way. */
  toHost: number;
  /** Datagrams forwarded from the host's agent to clients. */
  toClients: number;
  /** Payload bytes forwarded, both ways (relay headers not counted). */
  bytes: number;
  /** Dropped because the room's byte budget was spent. */
  shaped: number;
  /** Dropped for any other reason: bad key, unknown client id, no host agent yet, client caps. */
  dropped: number;
}

interface UdpRoom {
  readonly socket: Socket;
  readonly key: Buffer;
  readonly bucket: ByteBucket;
  readonly byKey: Map<string, UdpClient>;
  readonly byId: Map<number, UdpClient>;
  readonly perAddress: Map<string, number>;
  readonly stats: UdpRoomStats;
  agent: { address: string; port: number; last: number } | undefined;
  next: number;
  port: number;
}

/**
 * The UDP half of the relay: one UDP port per registered room. Clients send ordinary datagrams to
 * it (a transport-udp session runs end to end); the host's agent sends `"NPRH"`, the room key,
 * a client id (u16, 0 = keepalive) and the payload, and receives the client id and the payload.
 * Nothing is buffered: a datagram is forwarded or dropped (over the per-room budget, unknown id,
 * wrong key, client caps), which UDP sessions already survive.
 */
export class UdpRelay {
  private readonly rooms = new Map<string, UdpRoom>();
  private readonly clock: Clock;
  private readonly o: Required<Omit<UdpRelayOptions, 'clock'>>;
  private sweepTimer: Timer | undefined;

  constructor(options: UdpRelayOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.o = {
      host: options.host ?? '127.0.0.1',
      bytesPerSecond: options.bytesPerSecond ?? 4 << 20,
      maxClientsPerRoom: options.maxClientsPerRoom ?? 16,
      maxClientsPerAddress: options.maxClientsPerAddress ?? 4,
      idleMs: options.idleMs ?? 30_000,
    };
  }

  /** Counters of a room's UDP port. */
  roomStats(room: string): Readonly<UdpRoomStats> | undefined {
    return this.rooms.get(room)?.stats;
  }

  /** Opens (or reopens) the UDP port of `room`; resolves with the port and the host agent's key. */
  async open(room: string): Promise<{
    /** The UDP port bound for the room (on the relay's `host`). */
    port: number;
    /** The room key, 16 random bytes: the host's agent must put it in every datagram. */
    key: Buffer;
  }> {
    this.close(room);
    const socket = createSocket(this.o.host.includes(':') ? 'udp6' : 'udp4');
    const r: UdpRoom = {
      socket,
      key: randomBytes(16),
      bucket: new ByteBucket(this.o.bytesPerSecond, this.o.bytesPerSecond, this.clock.now()),
      byKey: new Map(),
      byId: new Map(),
      perAddress: new Map(),
      stats: { toHost: 0, toClients: 0, bytes: 0, shaped: 0, dropped: 0 },
      agent: undefined,
      next: 1,
      port: 0,
    };
    socket.on('error', () => {});
    socket.on('message', (msg, rinfo) => this.onDatagram(r, msg, rinfo));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, this.o.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    r.port = socket.address().port;
    this.rooms.set(room, r);
    this.armSweep();
    return { port: r.port, key: r.key };
  }

  /** Closes the UDP port of `room`. */
  close(room: string): void {
    const r = this.rooms.get(room);
    if (!r) return;
    this.rooms.delete(room);
    r.socket.close();
  }

  /** Closes every port. */
  closeAll(): void {
    for (const id of [...this.rooms.keys()]) this.close(id);
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
  }

  private onDatagram(r: UdpRoom, msg: Buffer, rinfo: RemoteInfo): void {
    const now = this.clock.now();
    if (r.bucket.waitMs(now) > 0) {
      r.stats.shaped++;
      return;
    }
    if (msg.length >= UDP_HOST_HEADER_BYTES && msg.subarray(0, 4).equals(UDP_HOST_MAGIC)) {
      if (!timingSafeEqual(msg.subarray(4, 20), r.key)) {
        r.stats.dropped++;
        return;
      }
      r.agent = { address: rinfo.address, port: rinfo.port, last: now };
      const id = msg.readUInt16BE(20);
      if (id === 0) return;
      const c = r.byId.get(id);
      if (!c) {
        r.stats.dropped++;
        return;
      }
      const payload = msg.subarray(UDP_HOST_HEADER_BYTES);
      r.bucket.take(payload.length, now);
      r.stats.toClients++;
      r.stats.bytes += payload.length;
      r.socket.send(payload, c.port, c.address);
      return;
    }
    if (!r.agent) {
      r.stats.dropped++;
      return;
    }
    const k = `${rinfo.address}|${rinfo.port}`;
    let c = r.byKey.get(k);
    if (!c) {
      const n = r.perAddress.get(rinfo.address) ?? 0;
      if (r.byKey.size >= this.o.maxClientsPerRoom || n >= this.o.maxClientsPerAddress) {
        r.stats.dropped++;
        return;
      }
      let id = r.next;
      while (r.byId.has(id) || id === 0) id = (id + 1) & 0xffff;
      r.next = (id + 1) & 0xffff;
      c = { id, address: rinfo.address, port: rinfo.port, last: now };
      r.byKey.set(k, c);
      r.byId.set(id, c);
      r.perAddress.set(rinfo.address, n + 1);
    }
    c.last = now;
    const out = Buffer.allocUnsafe(UDP_CLIENT_HEADER_BYTES + msg.length);
    out.writeUInt16BE(c.id, 0);
    msg.copy(out, UDP_CLIENT_HEADER_BYTES);
    r.bucket.take(msg.length, now);
    r.stats.toHost++;
    r.stats.bytes += msg.length;
    r.socket.send(out, r.agent.port, r.agent.address);
  }

  private armSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = this.clock.setTimer(Math.min(5000, this.o.idleMs / 2), () => {
      this.sweepTimer = undefined;
      const now = this.clock.now();
      for (const r of this.rooms.values()) {
        for (const [k, c] of r.byKey) {
          if (now - c.last < this.o.idleMs) continue;
          r.byKey.delete(k);
          r.byId.delete(c.id);
          const n = (r.perAddress.get(c.address) ?? 1) - 1;
          if (n > 0) r.perAddress.set(c.address, n);
          else r.perAddress.delete(c.address);
        }
        if (r.agent && now - r.agent.last >= this.o.idleMs) r.agent = undefined;
      }
      if (this.rooms.size > 0) this.armSweep();
    });
  }
}
