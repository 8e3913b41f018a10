import { ManualClock } from './clock.js';
import type { ChannelSpec, Timeouts } from './contract.js';
import { TransportError } from './errors.js';
import { MemoryConnection, type MemoryConnectionOptions, MemoryListener } from './memory-transport.js';
import { Prng } from './prng.js';

/** How one direction of a link between two endpoints behaves. */
export interface LinkConditions {
  /** Base one-way latency in ms. */
  readonly latencyMs: number;
  /** Extra one-way delay, uniform in [0, jitterMs] ms, drawn per packet. */
  readonly jitterMs: number;
  /** Probability (0–1) that a packet is lost. */
  readonly loss: number;
  /** Probability (0–1) that a packet arrives twice (the copy gets its own jitter). */
  readonly duplicate: number;
  /** Probability (0–1) that a packet is held back by an extra `reorderDelayMs` and overtaken. */
  readonly reorder: number;
  /** The hold-back delay of a reordered packet, in ms. */
  readonly reorderDelayMs: number;
  /** Bytes per second the link carries (packets queue behind each other); 0 means unlimited. */
  readonly bandwidthBytesPerSec: number;
  /** `false` cuts the link: every packet sent on it is dropped (unreachable / partitioned). */
  readonly up: boolean;
}

/** The default link: 10 ms one way, no jitter, no loss, unlimited bandwidth. */
export const DEFAULT_LINK: LinkConditions = Object.freeze({
  latencyMs: 10,
  jitterMs: 0,
  loss: 0,
  duplicate: 0,
  reorder: 0,
  reorderDelayMs: 20,
  bandwidthBytesPerSec: 0,
  up: true,
});

/** Bytes a simulated packet costs on top of its payload (counted in stats and bandwidth). */
export const SIM_HEADER_BYTES = 16;

/** Options of {@link SimulatedNetwork}. */
export interface SimulatedNetworkOptions {
  /** Seed of every random draw (per-link generators are derived from it). Default 1. */
  readonly seed?: number;
  /** Conditions of every link not configured otherwise. */
  readonly link?: Partial<LinkConditions>;
  /** The clock to use; a fresh {@link ManualClock} at 0 by default. */
  readonly clock?: ManualClock;
}

/** Counters over the whole network. */
export interface NetworkStats {
  /** Packets handed to links. */
  packetsSent: number;
  /** Packet copies delivered (duplicates count twice). */
  packetsDelivered: number;
  /** Packets dropped by random loss. */
  packetsLost: number;
  /** Packets dropped because their link was down. */
  packetsCut: number;
  /** Extra copies made by duplication. */
  packetsDuplicated: number;
}

interface LinkState {
  conditions: LinkConditions;
  readonly prng: Prng;
  busyUntil: number;
}

/** Options of {@link SimulatedNetwork.pair}. */
export interface PairOptions extends Partial<Omit<MemoryConnectionOptions, 'channels'>> {
  /** The channels of both ends (and of the listener, if `pair` creates it). */
  readonly channels: readonly ChannelSpec[];
  /** Virtual ms to wait for the handshake (default: the connect timeout). */
  readonly waitMs?: number;
}

function hashName(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * A deterministic network of named endpoints on a virtual clock. Every directed link (from → to)
 * has its own {@link LinkConditions} and its own PRNG derived from the seed and the two names, so a
 * link's behaviour depends only on the seed and its own traffic. Same seed, same calls → same
 * deliveries at the same virtual times, always.
 *
 * Endpoints need no registration: any string is an address. {@link listen} puts a
 * {@link MemoryListener} on an address and {@link connect} opens a {@link MemoryConnection} to it.
 * Time moves only through {@link advance} / {@link runUntil} (or the clock given in the options).
 *
 * ```ts
 * const net = new SimulatedNetwork({ seed: 42, link: { latencyMs: 30, jitterMs: 5, loss: 0.02 } });
 * const channels = [{ name: 'input', kind: 'reliable' }] as const;
 * const { client, server } = net.pair('alice', 'bob', { channels });
 * net.setLink('alice', 'bob', { loss: 0.2 }); // one direction only
 * net.cutBoth('alice', 'carol');               // carol cannot reach alice and vice versa
 * net.advance(1000);
 * ```
 */
export class SimulatedNetwork {
  /** The virtual clock every connection and timer of this network runs on: the `clock` option, or a fresh {@link ManualClock} starting at 0 ms. */
  readonly clock: ManualClock;
  /** The seed every link's PRNG is derived from (the `seed` option, default 1); print it to reproduce a run. */
  readonly seed: number;
  /** Whole-network counters. */
  readonly stats: NetworkStats = {
    packetsSent: 0,
    packetsDelivered: 0,
    packetsLost: 0,
    packetsCut: 0,
    packetsDuplicated: 0,
  };
  private defaults: LinkConditions;
  private readonly links = new Map<string, LinkState>();
  private readonly listeners = new Map<string, MemoryListener>();
  private nextConnId = 1;

  constructor(options: SimulatedNetworkOptions = {}) {
    this.seed = options.seed ?? 1;
    this.clock = options.clock ?? new ManualClock();
    this.defaults = checkConditions({ ...DEFAULT_LINK, ...options.link });
  }

  /** Current virtual time in ms. */
  now(): number {
    return this.clock.now();
  }

  /** Advances virtual time by `ms`, delivering packets and firing timers on the way. */
  advance(ms: number): void {
    this.clock.advance(ms);
  }

  /** Runs until `predicate()` holds or `maxMs` of virtual time passed; returns whether it holds. */
  runUntil(predicate: () => boolean, maxMs: number): boolean {
    return this.clock.runUntil(predicate, maxMs);
  }

  /** Changes the conditions of links that have not been configured individually (future packets). */
  setDefaultLink(conditions: Partial<LinkConditions>): void {
    this.defaults = checkConditions({ ...this.defaults, ...conditions });
  }

  /** The conditions of the directed link `from → to`. */
  link(from: string, to: string): LinkConditions {
    return this.links.get(`${from}\u0000${to}`)?.conditions ?? this.defaults;
  }

  /** Changes the directed link `from → to`; applies to packets sent from now on. */
  setLink(from: string, to: string, conditions: Partial<LinkConditions>): void {
    const state = this.linkState(from, to);
    state.conditions = checkConditions({ ...state.conditions, ...conditions });
  }

  /** Changes both directions between `a` and `b`. */
  setLinkBoth(a: string, b: string, conditions: Partial<LinkConditions>): void {
    this.setLink(a, b, conditions);
    this.setLink(b, a, conditions);
  }

  /** Cuts the directed link `from → to` (packets on it are dropped; packets in flight still land). */
  cut(from: string, to: string): void {
    this.setLink(from, to, { up: false });
  }

  /** Cuts both directions between `a` and `b`. */
  cutBoth(a: string, b: string): void {
    this.setLinkBoth(a, b, { up: false });
  }

  /** Cuts every link between a member of `groupA` and a member of `groupB`, both ways. */
  partition(groupA: readonly string[], groupB: readonly string[]): void {
    for (const a of groupA) for (const b of groupB) this.cutBoth(a, b);
  }

  /** Brings every cut link back up (other conditions are kept). */
  heal(): void {
    for (const state of this.links.values()) {
      if (!state.conditions.up) state.conditions = { ...state.conditions, up: true };
    }
  }

  /** Starts a listener on `address`. Throws `TransportError('invalid-argument')` if one is there. */
  listen(address: string, options: Omit<MemoryConnectionOptions, 'timeouts'> & ListenOptions): MemoryListener {
    if (this.listeners.has(address)) {
      throw new TransportError('invalid-argument', `address ${address} already has a listener`);
    }
    const listener = new MemoryListener(this, address, options);
    this.listeners.set(address, listener);
    return listener;
  }

  /** Opens a connection from `from` to the listener at `to`; it starts `connecting`. */
  connect(from: string, to: string, options: MemoryConnectionOptions): MemoryConnection {
    return MemoryConnection.connect(this, from, to, options, this.nextConnId++);
  }

  /**
   * Listens on `server` (if nothing listens there yet), connects from `client`, and runs the clock
   * until both ends are open. Throws `TransportError('timeout')` if the handshake does not finish.
   */
  pair(
    client: string,
    server: string,
    options: PairOptions,
  ): {
    /** The connecting end, from endpoint `client`; already `open`. */
    client: MemoryConnection;
    /** The end the listener at `server` accepted for it; already `open`. */
    server: MemoryConnection;
  } {
    const listener = this.listeners.get(server) ?? this.listen(server, options);
    let accepted: MemoryConnection | undefined;
    const off = listener.on('connection', (c) => {
      if ((c as MemoryConnection).remoteAddress === client && !accepted) accepted = c as MemoryConnection;
    });
    const conn = this.connect(client, server, options);
    const wait = options.waitMs ?? conn.timeouts.connectMs;
    this.runUntil(() => conn.state !== 'connecting' && accepted !== undefined, wait);
    off();
    if (conn.state !== 'open' || !accepted) {
      conn.close('pair: handshake failed');
      throw new TransportError('timeout', `pair ${client} -> ${server}: handshake did not finish`);
    }
    return { client: conn, server: accepted };
  }

  /**
   * Connects every pair of `names` (the earlier name of a pair is the client) and runs until all
   * are open. Returns `links.get(a)!.get(b)`: a's connection to b, for every a ≠ b.
   */
  mesh(names: readonly string[], options: PairOptions): Map<string, Map<string, MemoryConnection>> {
    const links = new Map<string, Map<string, MemoryConnection>>();
    for (const n of names) links.set(n, new Map());
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const a = names[i]!;
        const b = names[j]!;
        const { client, server } = this.pair(a, b, options);
        links.get(a)!.set(b, client);
        links.get(b)!.set(a, server);
      }
    }
    return links;
  }

  /** @internal The listener on `address`, if any. */
  listenerAt(address: string): MemoryListener | undefined {
    return this.listeners.get(address);
  }

  /** @internal Called by a listener when it closes. */
  removeListener(listener: MemoryListener): void {
    if (this.listeners.get(listener.localAddress) === listener) this.listeners.delete(listener.localAddress);
  }

  /**
   * Puts a raw packet of `bytes` bytes on the link `from → to`; `deliver` runs at each arrival
   * (0, 1 or 2 times, never synchronously). Returns the virtual time at which the packet has left
   * the sender (after queueing behind earlier packets on a bandwidth-limited link). The memory
   * transport uses it; so can tests of other transports' sans-I/O cores, to run them on this
   * network.
   */
  transmit(from: string, to: string, bytes: number, deliver: () => void): number {
    const link = this.linkState(from, to);
    const c = link.conditions;
    const now = this.clock.now();
    this.stats.packetsSent++;
    if (!c.up) {
      this.stats.packetsCut++;
      return now;
    }
    const start = Math.max(now, link.busyUntil);
    const done = c.bandwidthBytesPerSec > 0 ? start + (bytes * 1000) / c.bandwidthBytesPerSec : start;
    link.busyUntil = done;
    if (link.prng.chance(c.loss)) {
      this.stats.packetsLost++;
      return done;
    }
    const copies = link.prng.chance(c.duplicate) ? 2 : 1;
    if (copies === 2) this.stats.packetsDuplicated++;
    for (let i = 0; i < copies; i++) {
      let at = done + c.latencyMs;
      if (c.jitterMs > 0) at += link.prng.nextFloat() * c.jitterMs;
      if (link.prng.chance(c.reorder)) at += c.reorderDelayMs;
      this.clock.setTimer(at - now, () => {
        this.stats.packetsDelivered++;
        deliver();
      });
    }
    return done;
  }

  private linkState(from: string, to: string): LinkState {
    const key = `${from}\u0000${to}`;
    let state = this.links.get(key);
    if (!state) {
      state = {
        conditions: this.defaults,
        prng: new Prng((this.seed ^ hashName(`${from}->${to}`)) >>> 0),
        busyUntil: 0,
      };
      this.links.set(key, state);
    }
    return state;
  }
}

/** Options of {@link SimulatedNetwork.listen}. */
export interface ListenOptions {
  /** Most simultaneous connections; further clients are refused (default 64). */
  readonly maxConnections?: number;
  /** Timeouts of accepted connections (default {@link DEFAULT_TIMEOUTS}). */
  readonly timeouts?: Partial<Timeouts>;
}

function checkConditions(c: LinkConditions): LinkConditions {
  const prob = (x: number) => x >= 0 && x <= 1;
  if (!(c.latencyMs >= 0 && c.jitterMs >= 0 && c.reorderDelayMs >= 0 && c.bandwidthBytesPerSec >= 0)) {
    throw new TransportError('invalid-argument', 'link delays and bandwidth must be non-negative numbers');
  }
  if (!prob(c.loss) || !prob(c.duplicate) || !prob(c.reorder)) {
    throw new TransportError('invalid-argument', 'link loss, duplicate and reorder are probabilities in [0, 1]');
  }
  return Object.freeze({ ...c });
}
