/**
 * A seeded UDP relay for tests, benchmarks and demos: `@netplay/transport-udp/relay`.
 *
 * It listens on a loopback port and forwards every client's datagrams to a target (through one
 * upstream socket per client, so the target sees one address per client) and the replies back,
 * adding delay, jitter, loss, duplication and reordering drawn from a seeded PRNG. It stands in
 * for netem where the kernel has none. It uses wall-clock timers: it is a test harness, not
 * library code.
 * @packageDocumentation
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { Prng } from '@netplay/transport';

/** Impairment of one direction of the relay. */
export interface RelayImpairment {
  /** Base one-way delay, ms. */
  readonly latencyMs: number;
  /** Extra delay uniform in [0, jitterMs], ms. */
  readonly jitterMs: number;
  /** Probability of dropping a datagram. */
  readonly loss: number;
  /** Probability of sending a datagram twice. */
  readonly duplicate: number;
  /** Probability of holding a datagram back by `reorderDelayMs`. */
  readonly reorder: number;
  /** Extra delay in ms added to a datagram picked by `reorder`, on top of its latency and jitter, so later ones overtake it (default 5). */
  readonly reorderDelayMs: number;
  /** Drop everything (a cut cable). */
  readonly cut: boolean;
}

/** No impairment. */
export const CLEAN: RelayImpairment = Object.freeze({
  latencyMs: 0,
  jitterMs: 0,
  loss: 0,
  duplicate: 0,
  reorder: 0,
  reorderDelayMs: 5,
  cut: false,
});

/** Options of {@link UdpRelay.start}. */
export interface RelayOptions {
  /** Where to forward (a loopback address). */
  readonly targetHost: string;
  /** UDP port of the target on `targetHost` (e.g. a listener's `port`); required, no default. */
  readonly targetPort: number;
  /** Seed of the impairment draws. */
  readonly seed: number;
  /** Impairment of both directions (default none). */
  readonly impairment?: Partial<RelayImpairment>;
  /** Most clients (distinct source addresses) relayed; others are ignored (default 64). */
  readonly maxClients?: number;
}

/** Counters of a relay. */
export interface RelayStats {
  /** Datagram copies sent or scheduled to be sent, both directions (a duplicated datagram counts twice). */
  forwarded: number;
  /** Datagrams dropped by `loss` or while `cut` (not those of clients past `maxClients`, which are ignored uncounted). */
  dropped: number;
  /** Datagrams picked by `duplicate` and sent twice. */
  duplicated: number;
  /** Copies held back by `reorderDelayMs` after being picked by `reorder`. */
  reordered: number;
}

interface Client {
  readonly socket: Socket;
  readonly host: string;
  readonly port: number;
}

/** A seeded impairing UDP relay on loopback. */
export class UdpRelay {
  /** Counters over both directions. */
  readonly stats: RelayStats = { forwarded: 0, dropped: 0, duplicated: 0, reordered: 0 };
  private up: RelayImpairment;
  private down: RelayImpairment;
  private readonly prngUp: Prng;
  private readonly prngDown: Prng;
  private readonly clients = new Map<string, Client>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    /** The relay's host; clients connect here. */
    readonly host: string,
    /** The relay's port. */
    readonly port: number,
    private readonly options: RelayOptions,
  ) {
    this.up = { ...CLEAN, ...options.impairment };
    this.down = this.up;
    this.prngUp = new Prng(options.seed);
    this.prngDown = new Prng((options.seed ^ 0x9e3779b9) >>> 0);
  }

  /** Binds the relay on the loopback address of the target's family. */
  static async start(options: RelayOptions): Promise<UdpRelay> {
    const v6 = isIPv6(options.targetHost);
    const host = v6 ? '::1' : '127.0.0.1';
    const socket = createSocket({ type: v6 ? 'udp6' : 'udp4', ipv6Only: v6 });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    const relay = new UdpRelay(socket, host, socket.address().port, options);
    socket.on('message', (msg, rinfo) => relay.fromClient(msg, rinfo.address, rinfo.port));
    socket.on('error', () => {});
    return relay;
  }

  /** Changes the impairment; `direction` `up` is client → target, `down` target → client. */
  impair(impairment: Partial<RelayImpairment>, direction: 'up' | 'down' | 'both' = 'both'): void {
    if (direction !== 'down') this.up = { ...this.up, ...impairment };
    if (direction !== 'up') this.down = { ...this.down, ...impairment };
  }

  /** Cuts (or restores) both directions. */
  cut(on = true): void {
    this.impair({ cut: on });
  }

  private async fromClient(msg: Buffer, host: string, port: number): Promise<void> {
    if (this.closed) return;
    const key = `${host}|${port}`;
    let client = this.clients.get(key);
    if (!client) {
      if (this.clients.size >= (this.options.maxClients ?? 64)) return;
      const v6 = isIPv6(this.options.targetHost);
      const socket = createSocket({ type: v6 ? 'udp6' : 'udp4' });
      client = { socket, host, port };
      this.clients.set(key, client);
      const c = client;
      socket.on('message', (reply) => this.forward(reply, this.down, this.prngDown, this.socket, c.port, c.host));
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.bind(0, v6 ? '::1' : '127.0.0.1', resolve));
    }
    this.forward(msg, this.up, this.prngUp, client.socket, this.options.targetPort, this.options.targetHost);
  }

  private forward(msg: Uint8Array, imp: RelayImpairment, prng: Prng, via: Socket, port: number, host: string): void {
    if (this.closed) return;
    if (imp.cut || prng.chance(imp.loss)) {
      this.stats.dropped++;
      return;
    }
    const copies = prng.chance(imp.duplicate) ? 2 : 1;
    if (copies === 2) this.stats.duplicated++;
    for (let i = 0; i < copies; i++) {
      let delay = imp.latencyMs + (imp.jitterMs > 0 ? prng.nextFloat() * imp.jitterMs : 0);
      if (prng.chance(imp.reorder)) {
        delay += imp.reorderDelayMs;
        this.stats.reordered++;
      }
      this.stats.forwarded++;
      if (delay <= 0) {
        via.send(msg, port, host);
        continue;
      }
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (!this.closed) via.send(msg, port, host);
      }, delay);
      this.timers.add(t);
    }
  }

  /** Stops relaying and closes every socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const all = [this.socket, ...[...this.clients.values()].map((c) => c.socket)];
    this.clients.clear();
    await Promise.all(all.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
