/**
 * A star-shaped session on a SimulatedNetwork, as `@netplay/session` runs the P2P schedulers:
 * the host (peer 0) is linked to every client, clients only to the host.
 *
 * Forwarding (what the session layer does, kept small here):
 * - Every message on the star's links carries one header byte. Client → host: the destination
 *   peer id, or {@link BROADCAST} for a message of a broadcast channel. Host → client: the origin
 *   peer id (the host itself, or the client whose message it forwards).
 * - A client sends a message of a broadcast channel (one its scheduler sends identically to every
 *   peer: the mesh's `input`/`input-u`, frame-advance's `sched`) ONCE, as {@link BROADCAST}: the
 *   copy its scheduler addresses to the host goes out, the copies to other clients are dropped.
 *   Other messages (pings) are addressed and relayed one by one.
 * - The host hands a broadcast to its own scheduler, then forwards the same bytes, in the order it
 *   received them, to every other live client (as coming from the original sender). A message
 *   addressed to another client is forwarded to it alone.
 * - `kill(id)` closes the client's link: from then on the host ignores everything from it (even
 *   what was in flight) and forwards nothing to it; then the host's shell calls
 *   `removePeer(id, now)`. So every message of the leaver that any peer gets went through the host
 *   first: the host's view of the leaver's stream is a superset of everyone else's.
 *
 * Each scheduler runs in a LockstepRunner over one {@link RelayConnection} per other peer.
 */
import { fc } from '@fast-check/vitest';
import type { Core } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import {
  type ChannelSpec,
  type Connection,
  type ConnectionEventMap,
  type ConnectionState,
  Emitter,
  type Handler,
  type LinkConditions,
  MutableConnectionStats,
  type SimulatedNetwork,
  type Unsubscribe,
} from '@netplay/transport';
import { expect } from 'vitest';
import { LockstepError, LockstepRunner, type LockstepScheduler, runFrame } from '../src/index.js';
import {
  expectDeterministic,
  link,
  network,
  replayChecksums,
  type SimPeer,
  sameBytes,
  scriptInputs,
} from './harness.js';
import { expectEveryFrame, frameChecksums, makeScript, playScript, replayGenerated, type Script } from './oracle.js';

/** Header byte of a client's broadcast. */
export const BROADCAST = 255;

/** A scheduler the host can remove a peer from. */
export type Departing = LockstepScheduler & {
  removePeer(id: number, now: number): void;
  /** The ids of the peers it still plays with. */
  readonly peerIds: readonly number[];
  /** Messages it dropped (did not decode, broke the protocol). */
  readonly dropped: number;
};

/** Endpoint name of peer `i` on the network (`h0` the host, `c1`, `c2`, ... the clients). */
export function hubName(i: number): string {
  return i === 0 ? 'h0' : `c${i}`;
}

/** A connection to one peer, over the star: sending goes through `out`, arrivals come from `deliver`. */
export class RelayConnection implements Connection {
  readonly stats = new MutableConnectionStats();
  readonly limits = { maxMessageBytes: 2 * 1024 * 1024, maxUnreliableBytes: 1200 };
  state: ConnectionState = 'open';
  private readonly events = new Emitter<ConnectionEventMap>();

  constructor(
    readonly remoteAddress: string,
    readonly channels: readonly ChannelSpec[],
    private readonly out: (channel: string, data: Uint8Array) => void,
  ) {}

  on<K extends keyof ConnectionEventMap>(type: K, handler: Handler<ConnectionEventMap, K>): Unsubscribe {
    return this.events.on(type, handler);
  }

  send(channel: string, data: Uint8Array): void {
    if (this.state === 'closed') return;
    this.stats.bytesSent += data.length;
    this.out(channel, data);
  }

  close(): void {
    this.state = 'closed';
  }

  deliver(channel: string, data: Uint8Array): void {
    if (this.state !== 'closed') this.events.emit('message', { channel, data });
  }
}

function wrap(head: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + data.length);
  out[0] = head;
  out.set(data, 1);
  return out;
}

export interface StarOptions<S extends Departing, C extends Core> {
  readonly net: SimulatedNetwork;
  /** Peers, host included (ids 0..n-1). */
  readonly n: number;
  readonly channels: readonly ChannelSpec[];
  /** Channels a scheduler sends identically to every peer. */
  readonly broadcast: readonly string[];
  /** Builds peer `id`'s scheduler (its peers are every other id). */
  readonly make: (id: number) => S;
  readonly makeCore: () => C;
}

export interface StarPeer<S extends Departing, C extends Core> extends SimPeer<C> {
  readonly scheduler: S;
}

/** The star session: {@link StarOptions}, peers built and linked at construction. */
export class StarHub<S extends Departing, C extends Core> {
  readonly peers: StarPeer<S, C>[] = [];
  readonly alive: boolean[];
  /**
   * Clients the host's scheduler removed on its own (liveness): the host ignores everything from
   * them from then on, as its shell does after `removePeer`, but still sends them its own messages
   * (the LEAVE that tells them).
   */
  readonly removed: boolean[];
  /** Frames each peer had run when a client was killed (filled by `kill`). */
  killedAtFrames: number[] = [];
  private readonly net: SimulatedNetwork;
  /** `ends[i]` (i ≥ 1): the client's end of its link; `hostEnds[i]`: the host's end. */
  private readonly ends: Connection[] = [];
  private readonly hostEnds: Connection[] = [];
  /** `relays[i].get(j)`: peer i's RelayConnection towards peer j. */
  private readonly relays: Map<number, RelayConnection>[] = [];

  constructor(options: StarOptions<S, C>) {
    const { net, n, channels } = options;
    this.net = net;
    this.alive = Array.from({ length: n }, () => true);
    this.removed = Array.from({ length: n }, () => false);
    const broadcast = new Set(options.broadcast);
    for (let i = 1; i < n; i++) {
      const { ab, ba } = link(net, hubName(i), hubName(0), channels);
      this.ends[i] = ab;
      this.hostEnds[i] = ba;
    }
    for (let i = 0; i < n; i++) {
      const relays = new Map<number, RelayConnection>();
      for (let j = 0; j < n; j++) {
        if (j === i) continue;
        let out: (channel: string, data: Uint8Array) => void;
        if (i === 0) {
          // Host → client j: direct, with the origin byte.
          out = (ch, data) => {
            if (this.alive[j]) this.hostEnds[j]!.send(ch, wrap(0, data));
          };
        } else {
          // Client i → peer j: broadcasts once (the host's copy), others addressed.
          out = (ch, data) => {
            if (!this.alive[i]) return;
            if (broadcast.has(ch)) {
              if (j === 0) this.ends[i]!.send(ch, wrap(BROADCAST, data));
            } else this.ends[i]!.send(ch, wrap(j, data));
          };
        }
        relays.set(j, new RelayConnection(hubName(j), channels, out));
      }
      this.relays.push(relays);
    }
    // Arrivals.
    for (let i = 1; i < n; i++) {
      this.ends[i]!.on('message', ({ channel, data }) => {
        if (!this.alive[i] || data.length === 0) return;
        this.relays[i]!.get(data[0]!)?.deliver(channel, data.subarray(1));
      });
      this.hostEnds[i]!.on('message', ({ channel, data }) => {
        if (!this.alive[i] || this.removed[i] || data.length === 0) return;
        const dest = data[0]!;
        const payload = data.subarray(1);
        if (dest === BROADCAST || dest === 0) this.relays[0]!.get(i)!.deliver(channel, payload);
        if (dest === BROADCAST) {
          for (let j = 1; j < n; j++) if (j !== i && this.alive[j]) this.hostEnds[j]!.send(channel, wrap(i, payload));
        } else if (dest !== 0 && dest < n && this.alive[dest]) this.hostEnds[dest]!.send(channel, wrap(i, payload));
      });
    }
    for (let i = 0; i < n; i++) {
      const scheduler = options.make(i);
      const core = options.makeCore();
      const runner = new LockstepRunner({ clock: net.clock, scheduler, core, log: true });
      for (const [j, c] of this.relays[i]!) runner.addPeer(j, c);
      this.peers.push({ name: hubName(i), scheduler, core, runner });
    }
  }

  /** Peer `i`'s connection towards peer `j` (what its scheduler sends to `j` goes through it). */
  relay(i: number, j: number): Connection {
    return this.relays[i]!.get(j)!;
  }

  /** Kills client `id` now: its link closes, the host ignores it from now on and removes it. */
  kill(id: number): void {
    if (id <= 0 || !this.alive[id]) throw new Error(`cannot kill ${id}`);
    this.killedAtFrames = this.peers.map((p) => p.runner.framesRun);
    this.alive[id] = false;
    this.peers[id]!.runner.stop();
    this.ends[id]!.close('killed');
    const host = this.peers[0]!;
    host.runner.removePeer(id);
    host.scheduler.removePeer(id, this.net.now());
    host.runner.pump();
  }

  /** Kills client `id` at time `at`. */
  killAt(id: number, at: number): void {
    this.net.clock.setTimer(at - this.net.now(), () => this.kill(id));
  }

  /** The peers still alive. */
  get live(): StarPeer<S, C>[] {
    return this.peers.filter((_, i) => this.alive[i]);
  }
}

/** Generated conditions of one direction of a client's link to the host. */
export const linkArb = fc.record({
  latencyMs: fc.integer({ min: 0, max: 60 }),
  jitterMs: fc.integer({ min: 0, max: 30 }),
  loss: fc.double({ min: 0, max: 0.15, noNaN: true }),
  duplicate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  reorder: fc.double({ min: 0, max: 0.3, noNaN: true }),
});

/** Both directions of up to four clients' links (see {@link Departure.links}). */
export const starLinksArb = fc.array(linkArb, { minLength: 8, maxLength: 8 });

/** Generators of the fields of a {@link Departure}, to spread into a `test.prop` record. */
export const departureArbs = {
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  n: fc.integer({ min: 3, max: 5 }),
  links: starLinksArb,
  victim: fc.nat(),
  killFrame: fc.integer({ min: 1, max: 250 }),
};

/** One generated departure: a star of `n` peers where one client is killed mid-game. */
export interface Departure {
  readonly seed: number;
  /** Peers, host included (3 to 5). */
  readonly n: number;
  /** `links[2i - 2]`: client i → host; `links[2i - 1]`: host → client i. */
  readonly links: readonly Partial<LinkConditions>[];
  /** Picks the client killed: `1 + victim % (n - 1)`. */
  readonly victim: number;
  /** The kill comes at `t0 + killFrame * frameMs`. */
  readonly killFrame: number;
}

/** What a scheduler brings to {@link expectPlayOnAfterKill}. */
export interface DepartureRig<S extends Departing> {
  readonly channels: readonly ChannelSpec[];
  /** Channels its scheduler sends identically to every peer (see {@link StarOptions}). */
  readonly broadcast: readonly string[];
  readonly inputBytes: number;
  readonly frameMs: number;
  /** Builds peer `id`'s scheduler for a game starting at `t0`. */
  readonly make: (id: number, t0: number) => S;
  /** `maxHold`, `mask` and `setBits` of the scripted inputs (see `scriptInputs`). */
  readonly maxHold?: number;
  readonly mask?: number;
  readonly setBits?: number;
  /**
   * The honest oracle (issue 13, item 8): given the hub and the inputs the test generates (one
   * {@link Script} per peer, played instead of `scriptInputs`), it starts recording the stamps
   * the schedulers put on them and the host's LEAVE from what they send; after the run, the
   * returned function gives the inputs of every frame by the mode's rule. Every live peer's state
   * after every frame must then equal the replay of those inputs.
   */
  readonly oracle?: (ctx: OracleContext<S>) => () => (frame: number) => Uint8Array;
}

/** What a departure oracle gets (see {@link DepartureRig.oracle}). */
export interface OracleContext<S extends Departing> {
  readonly hub: StarHub<S, TestCore>;
  readonly net: SimulatedNetwork;
  readonly t0: number;
  readonly scripts: readonly Script[];
  readonly victim: number;
  /** Stamp violations found while recording (must stay empty). */
  readonly violations: string[];
}

/**
 * The departure property shared by the P2P schedulers: a {@link StarHub} on the generated links
 * plays with scripted inputs; client `1 + victim % (n - 1)` is killed at `killFrame` and the host
 * removes it. Asserts that the n - 1 others ran at least 120 frames after the kill, that their
 * logs agree and match the offline replay, and that none lists the victim among its peers any
 * more. Returns the live peers and the victim for the scheduler's own checks.
 */
export function expectPlayOnAfterKill<S extends Departing>(
  d: Departure,
  rig: DepartureRig<S>,
): { live: StarPeer<S, TestCore>[]; victim: number } {
  const { seed, n, links } = d;
  const { frameMs: F, inputBytes } = rig;
  const net = network({ seed, link: { latencyMs: 10 } });
  for (let i = 1; i < n; i++) {
    net.setLink(hubName(i), hubName(0), links[2 * i - 2]!);
    net.setLink(hubName(0), hubName(i), links[2 * i - 1]!);
  }
  // The game starts a second after the links are up (setting them up under loss takes time, and
  // the scripts must start after it): `make` runs once every link is connected.
  let t0 = Number.NaN;
  const fresh = () => new TestCore({ players: n, inputBytes });
  const hub = new StarHub({
    net,
    n,
    channels: rig.channels,
    broadcast: rig.broadcast,
    make: (id) => {
      if (Number.isNaN(t0)) t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
      return rig.make(id, t0);
    },
    makeCore: fresh,
  });
  const victim = 1 + (d.victim % (n - 1));
  const until = t0 + (d.killFrame + 400) * F;
  const violations: string[] = [];
  let finish: (() => (frame: number) => Uint8Array) | undefined;
  const sums = hub.peers.map((p) => frameChecksums(p.core));
  if (rig.oracle) {
    const scripts = hub.peers.map((_, i) => makeScript(seed + i, inputBytes, F, t0 - 200, until, rig.maxHold));
    finish = rig.oracle({ hub, net, t0, scripts, victim, violations });
    for (const [i, p] of hub.peers.entries()) playScript(net, p.runner, scripts[i]!);
  } else {
    for (const [i, p] of hub.peers.entries()) {
      scriptInputs(net, p.runner, inputBytes, seed + i, F, t0 - 200, until, rig.maxHold, rig.mask, rig.setBits);
    }
  }
  hub.killAt(victim, t0 + d.killFrame * F);
  net.clock.advanceTo(until + 5000);
  if (finish) {
    const inputsAt = finish();
    expect(violations).toEqual([]);
    const liveSums = hub.peers.map((p, i) => ({ name: p.name, sums: sums[i]! })).filter((_, i) => hub.alive[i]);
    const frames = Math.max(...liveSums.map((x) => x.sums.length));
    expectEveryFrame(liveSums, replayGenerated(fresh(), frames, inputsAt), 120);
  }
  const live = hub.live;
  expect(live.length).toBe(n - 1);
  for (const p of live) {
    const i = hub.peers.indexOf(p);
    expect(p.runner.framesRun - hub.killedAtFrames[i]!, `${p.name} frames after the kill`).toBeGreaterThanOrEqual(120);
  }
  expectDeterministic(live, fresh, 120);
  for (const p of live) expect(p.scheduler.peerIds, p.name).not.toContain(victim);
  return { live, victim };
}

/** A message in a {@link ManualNet}. */
export interface ManualMessage {
  readonly from: number;
  readonly to: number;
  readonly channel: string;
  readonly data: Uint8Array;
}

/** The input a {@link ManualNet} peer sets at a step (its first byte). */
export type ManualInput = (peer: number, step: number) => number;

/**
 * Schedulers driven by hand, fully connected, without a network: every message sent during a step
 * is delivered at the next step, unless `drop` discards it or `hold` keeps it back until
 * `release()`. Unit tests use it to put messages in an exact order (a LEAVE before the leaver's
 * last messages, say). Peer 0 is the host.
 */
export class ManualNet<S extends Departing> {
  readonly cores: Core[];
  /** Each peer's inputs per frame run (copies). */
  readonly logs: Uint8Array[][];
  /** Every message delivered, in order. */
  readonly delivered: ManualMessage[] = [];
  readonly dead = new Set<number>();
  now: number;
  drop: (m: ManualMessage) => boolean = () => false;
  hold: (m: ManualMessage) => boolean = () => false;
  held: ManualMessage[] = [];
  private queue: ManualMessage[] = [];
  private steps = 0;

  constructor(
    readonly peers: readonly S[],
    makeCore: () => Core,
    private readonly inputBytes: number,
    readonly frameMs: number,
    startMs: number,
  ) {
    this.now = startMs;
    this.cores = peers.map(() => makeCore());
    this.logs = peers.map(() => []);
  }

  /** Moves every outbox into the queue (a dead peer's messages are lost). */
  collect(): void {
    for (const [i, p] of this.peers.entries()) {
      while (p.outbox.length > 0) {
        const e = p.outbox.shift()!;
        if (!this.dead.has(i)) this.queue.push({ from: i, to: e.to, channel: e.channel, data: e.data.slice() });
      }
    }
  }

  /** One frame time: deliver the queue, then each live peer sets `input(peer, step)`, ticks and runs what it can. */
  step(input: ManualInput): void {
    this.now += this.frameMs;
    const k = this.steps++;
    const queue = this.queue;
    this.queue = [];
    for (const m of queue) {
      if (this.dead.has(m.from) || this.dead.has(m.to) || this.drop(m)) continue;
      if (this.hold(m)) this.held.push(m);
      else this.deliver(m);
    }
    for (const [i, p] of this.peers.entries()) {
      if (this.dead.has(i)) continue;
      const value = new Uint8Array(this.inputBytes);
      value[0] = input(i, k);
      p.setLocalInput(value, this.now);
      p.tick(this.now);
      for (let req = p.poll(this.now); req; req = p.poll(this.now)) {
        runFrame(this.cores[i]!, req.inputs, req.command);
        this.logs[i]!.push(req.inputs.slice());
      }
    }
    this.collect();
  }

  /** Runs `count` steps of {@link step} with `input`. */
  run(count: number, input: ManualInput): void {
    for (let k = 0; k < count; k++) this.step(input);
  }

  /**
   * Peer `id` dies: one more step runs without it (with `input`), then the `drop` and `hold`
   * filters are cleared (what they held stays held until {@link release}).
   */
  kill(id: number, input: ManualInput): void {
    this.dead.add(id);
    this.step(input);
    this.drop = () => false;
    this.hold = () => false;
  }

  /** Only the host removes peers: a member's `removePeer` throws LockstepError `bad-argument`. */
  expectOnlyHostRemoves(): void {
    let error: unknown;
    try {
      this.peers[1]!.removePeer(2, this.now);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LockstepError);
    expect((error as LockstepError).code).toBe('bad-argument');
  }

  /**
   * On the host, once its outbox was collected, removing `leaver` again or an unknown id (9) queues
   * no message that `counts`.
   */
  expectRemoveOnce(leaver: number, counts: (e: { readonly channel: string }) => boolean = () => true): void {
    const host = this.peers[0]!;
    this.collect();
    host.removePeer(leaver, this.now);
    host.removePeer(9, this.now);
    expect(host.outbox.filter(counts)).toEqual([]);
  }

  /**
   * Peer 1, which has dropped nothing yet, gets on `channel` a LEAVE from a non-host (peer 2), one
   * for itself, one for an unknown peer (7), one too long and one too short, and drops each one.
   * `leave(leaver, extra)` encodes a well-formed LEAVE of `leaver` followed by `extra` bytes.
   */
  expectDropsBadLeaves(channel: string, leave: (leaver: number, extra?: number) => Uint8Array): void {
    const ok = leave(2);
    const cases: [number, Uint8Array, string][] = [
      [2, leave(2), 'from a non-host'],
      [2, leave(1), 'for itself, from a non-host'],
      [0, leave(7), 'unknown peer'],
      [0, leave(2, 1), 'too long'],
      [0, ok.subarray(0, ok.length - 1), 'too short'],
    ];
    const p = this.peers[1]!;
    for (const [i, [from, data, what]] of cases.entries()) {
      p.receive(from, channel, data, this.now);
      expect(p.dropped, `case ${i}: ${what}`).toBe(i + 1);
    }
    // A LEAVE for itself from the host: it was removed, and ends so (issue 13).
    const ended = p as unknown as { endReason: string | undefined };
    expect(ended.endReason).toBeUndefined();
    p.receive(0, channel, leave(1), this.now);
    expect(ended.endReason).toBe('removed');
  }

  /**
   * `leaver` is cut off without a LEAVE: `member` still counts it among its peers and stalls
   * (fewer than 10 frames in 40 steps).
   */
  expectStallWithoutLeave(leaver: number, member: number, input: ManualInput): void {
    this.dead.add(leaver);
    const before = this.logs[member]!.length;
    this.run(40, input);
    expect(this.peers[member]!.peerIds).toContain(leaver);
    expect(this.logs[member]!.length - before).toBeLessThan(10);
  }

  /**
   * The LEAVE fuzz: after 10 steps, peer 1 gets `data` from `from` on `channel` without
   * throwing, and after 5 more steps peers 0 and 2 still agree.
   */
  expectSurvives(from: number, channel: string, data: Uint8Array, input: ManualInput, fresh: () => Core): void {
    this.run(10, input);
    expect(() => this.peers[1]!.receive(from, channel, data, this.now)).not.toThrow();
    this.run(5, input);
    this.expectAgreement([0, 2], fresh);
  }

  /** Delivers the held messages now. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const m of held) this.deliver(m);
  }

  private deliver(m: ManualMessage): void {
    this.delivered.push(m);
    this.peers[m.to]!.receive(m.from, m.channel, m.data, this.now);
  }

  /** Logs of `ids` are prefixes of the longest, and each core's checksum equals the offline replay's. */
  expectAgreement(ids: readonly number[], fresh: () => Core): void {
    let ref: Uint8Array[] = [];
    for (const i of ids) if (this.logs[i]!.length > ref.length) ref = this.logs[i]!;
    const sums = replayChecksums(
      fresh(),
      ref.map((inputs, frame) => ({ frame, inputs, command: 0 })),
    );
    for (const i of ids) {
      const log = this.logs[i]!;
      for (let f = 0; f < log.length; f++) expect(sameBytes(log[f]!, ref[f]!), `peer ${i} frame ${f}`).toBe(true);
      expect(this.cores[i]!.checksum(), `peer ${i} checksum`).toBe(sums[log.length]);
    }
  }
}
