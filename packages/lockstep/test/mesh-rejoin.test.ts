/**
 * Mesh rejoin and mid-game join on a star (as @netplay/session relays the mesh): a client is
 * killed and removed, then a successor joins under its id (a new incarnation: packet ids from
 * `INCARNATION_IDS`), and/or a newcomer takes a free port. The host relays every message and,
 * like the session, replays the members' input histories at the acceptance (`MeshRelayHistory`)
 * and drops what its scheduler sends a candidate's slot until the acceptance. Late copies of the
 * departed peer's packets are re-delivered to every member after the successor is in.
 */
import { fc, test } from '@fast-check/vitest';
import { decodeMameHubInputPacket } from '@netplay/protocol';
import { TestCore } from '@netplay/state/testing';
import type { Connection, SimulatedNetwork } from '@netplay/transport';
import { describe, expect } from 'vitest';
import { INCARNATION_IDS, LockstepRunner, MESH_CHANNELS, MeshPeer, MeshRelayHistory } from '../src/index.js';
import { readU32BE } from '../src/pool.js';
import { link, network, PATIENT } from './harness.js';
import { BROADCAST, linkArb, RelayConnection } from './hub.js';
import {
  expectEveryFrame,
  frameChecksumsFrom,
  inForce,
  makeScript,
  playScript,
  replayGenerated,
  type Script,
  scriptValue,
  tapSends,
} from './oracle.js';

const F = 20;
const IB = 2;
const SYNC = 100;
const RUNS = Number(process.env.MESH_REJOIN_RUNS ?? 10);

/** One incarnation of a peer: the original player of a port, or one that entered later. */
interface Inc {
  readonly name: string;
  readonly slot: number;
  readonly scheduler: MeshPeer;
  readonly runner: LockstepRunner<TestCore>;
  readonly core: TestCore;
  readonly sums: { sums: bigint[]; first: number };
  /** The client's end of its link (undefined for the host). */
  readonly end?: Connection;
  /** The host's end of its link. */
  readonly hostEnd?: Connection;
  alive: boolean;
  /** Host side: drop what the host's scheduler sends it until its acceptance. */
  held: boolean;
  /** Generated inputs and the stamps the scheduler put on them (packet time, value). */
  readonly script: Script;
  readonly stamps: { time: number; value: Uint8Array }[];
  /** Frames this incarnation's port counts from / up to (exclusive). */
  activeFrom: number;
  cutAt: number;
  /** The ids of its packets (checked: its incarnation's range). */
  readonly ids: number[];
  /** Its packets as sent (for late copies after it left). */
  readonly sent: Uint8Array[];
}

function wrap(head: number, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + data.length);
  out[0] = head;
  out.set(data, 1);
  return out;
}

interface Plan {
  readonly seed: number;
  readonly n: number;
  readonly links: readonly { latencyMs: number; jitterMs: number; loss: number; duplicate: number; reorder: number }[];
  readonly victim: number;
  readonly killFrame: number;
  /** Frames from the kill to the successor's start (undefined: no successor). */
  readonly rejoinAfter: number | undefined;
  /** The newcomer's start frame (undefined: none). */
  readonly newcomerAt: number | undefined;
  /** Ms after the successor's acceptance at which late copies of the departed peer's packets arrive. */
  readonly lateCopiesMs: number;
}

/** The star: host 0, clients by slot; incarnations replace each other in a slot. */
class RejoinStar {
  readonly incs: Inc[] = [];
  readonly current = new Map<number, Inc>();
  readonly history: MeshRelayHistory;
  readonly violations: string[] = [];
  /** The host's LEAVE per leaver: cut frame. */
  readonly cuts = new Map<number, number>();
  host!: Inc;
  private readonly hostRelays = new Map<number, RelayConnection>();
  private readonly spare = new Map<string, { end: Connection; hostEnd: Connection }>();
  private readonly hostIds = new Set<number>();

  constructor(
    readonly net: SimulatedNetwork,
    readonly ports: number,
    readonly initial: readonly number[],
    public t0: number,
  ) {
    this.history = new MeshRelayHistory(ports);
  }

  /** Creates the link of a future incarnation now (links are set up before the game). */
  prepare(name: string, conditions: [Plan['links'][number], Plan['links'][number]]): void {
    this.net.setLink(name, 'h0', conditions[0]);
    this.net.setLink('h0', name, conditions[1]);
    const { ab, ba } = link(this.net, name, 'h0', MESH_CHANNELS);
    this.spare.set(name, { end: ab, hostEnd: ba });
  }

  private make(slot: number, name: string, script: Script, candidate: boolean): Inc {
    const core = new TestCore({ players: this.ports, inputBytes: IB });
    let self: MeshPeer | undefined;
    const scheduler = new MeshPeer({
      id: slot,
      members: candidate ? [{ id: 0, port: 0 }] : this.initial.map((id) => ({ id, port: id })),
      ...(candidate ? { candidate: true, port: slot } : {}),
      ports: this.ports,
      inputBytes: IB,
      frameMs: F,
      startMs: this.t0,
      syncIntervalFrames: SYNC,
      liveness: PATIENT,
      // The relay reaches everyone: every member answers the reachability vote with yes.
      onAction: (a) => {
        if (a.type === 'connect') self!.reportConnect(a.peer, true);
      },
    });
    self = scheduler;
    const sums = frameChecksumsFrom(core, scheduler);
    const runner = new LockstepRunner({ clock: this.net.clock, scheduler, core, log: true });
    const links = slot === 0 ? undefined : this.spare.get(name)!;
    const inc: Inc = {
      name,
      slot,
      scheduler,
      runner,
      core,
      sums,
      ...(links ? { end: links.end, hostEnd: links.hostEnd } : {}),
      alive: true,
      held: candidate,
      script,
      stamps: [],
      activeFrom: candidate ? Infinity : 0,
      cutAt: Infinity,
      ids: [],
      sent: [],
    };
    this.incs.push(inc);
    return inc;
  }

  /** The host and the initial clients. */
  start(scripts: ReadonlyMap<number, Script>): void {
    this.host = this.make(0, 'h0', scripts.get(0)!, false);
    this.current.set(0, this.host);
    for (const slot of this.initial)
      if (slot !== 0) this.attach(this.make(slot, `c${slot}g0`, scripts.get(slot)!, false));
  }

  /** A candidate enters in `slot` now (a successor if the slot's player left). */
  enter(slot: number, name: string, script: Script): Inc {
    const inc = this.make(slot, name, script, true);
    this.attach(inc);
    return inc;
  }

  private attach(inc: Inc): void {
    const { slot } = inc;
    this.current.set(slot, inc);
    // The client's routes: to every port's id, taken or not (as the session's routes).
    const relays = new Map<number, RelayConnection>();
    for (let j = 0; j < this.ports; j++) {
      if (j === slot) continue;
      const relay = new RelayConnection(`h0 for ${j}`, MESH_CHANNELS, (ch, data) => {
        if (!inc.alive) return;
        if (ch === 'input' || ch === 'input-u') {
          if (j === 0) inc.end!.send(ch, wrap(BROADCAST, data));
        } else inc.end!.send(ch, wrap(j, data));
      });
      relays.set(j, relay);
      inc.runner.addPeer(j, relay);
      if (j === 0) this.tapClient(inc, relay);
    }
    inc.end!.on('message', ({ channel, data }) => {
      if (inc.alive && data.length > 0) relays.get(data[0]!)?.deliver(channel, data.subarray(1));
    });
    // The host's side.
    const hostRelay = new RelayConnection(inc.name, MESH_CHANNELS, (ch, data) => {
      if (!inc.alive || this.current.get(slot) !== inc) return;
      if (inc.held) {
        const sync = MeshRelayHistory.acceptedSync(ch, data);
        if (sync === undefined) return;
        inc.held = false;
        inc.activeFrom = readU32BE(data, 5);
        this.history.replay(slot, sync, (from, c, d) => inc.hostEnd!.send(c, wrap(from, d)));
      }
      inc.hostEnd!.send(ch, wrap(0, data));
    });
    this.hostRelays.set(slot, hostRelay);
    this.host.runner.addPeer(slot, hostRelay);
    this.tapHostRelay(hostRelay);
    inc.hostEnd!.on('message', ({ channel, data }) => {
      if (!inc.alive || data.length === 0) return;
      const dest = data[0]!;
      const payload = data.subarray(1);
      if (dest === BROADCAST || dest === 0) hostRelay.deliver(channel, payload);
      if (dest === BROADCAST) {
        this.history.record(slot, channel, payload);
        for (const [j, q] of this.current)
          if (j !== 0 && j !== slot && q.alive) q.hostEnd!.send(channel, wrap(slot, payload));
      } else if (dest !== 0) {
        const q = this.current.get(dest);
        if (q?.alive) q.hostEnd!.send(channel, wrap(slot, payload));
      }
    });
  }

  /** Kills the client in `slot`: the host ignores it from now on and removes it. */
  kill(slot: number): void {
    const inc = this.current.get(slot)!;
    inc.alive = false;
    inc.runner.stop();
    inc.end!.close('killed');
    this.host.runner.removePeer(slot);
    this.history.forget(slot);
    this.host.scheduler.removePeer(slot, this.net.now());
    this.host.runner.pump();
  }

  /** Late copies: `inc`'s packets (sent before it left) delivered again to every live client, on `input-u`. */
  lateCopies(inc: Inc): void {
    for (const [j, q] of this.current)
      if (j !== 0 && q.alive) for (const p of inc.sent) q.hostEnd!.send('input-u', wrap(inc.slot, p));
  }

  /** Records a client's stamps from what it sends the host. */
  private tapClient(inc: Inc, relay: Connection): void {
    const maxLatency = Math.ceil(400 / F) + 1;
    let prev = -1;
    tapSends(relay, (channel, data) => {
      if (channel !== 'input' || data[0] !== 1 || !inc.alive) return;
      this.stamp(inc, data, prev, maxLatency);
      prev = inc.stamps.at(-1)!.time;
    });
  }

  /** The host's packets (once each: it sends every client a copy) and LEAVEs, from what it sends on `relay`. */
  private tapHostRelay(relay: Connection): void {
    const maxLatency = Math.ceil(400 / F) + 1;
    tapSends(relay, (channel, data) => {
      if (channel === 'join' && data[0] === 6) this.cuts.set(readU32BE(data, 1), readU32BE(data, 9));
      if (channel !== 'input' || data[0] !== 1) return;
      const id = readU32BE(data, 1);
      if (this.hostIds.has(id)) return;
      this.hostIds.add(id);
      const prev = this.host.stamps.at(-1)?.time ?? -1;
      this.stamp(this.host, data, prev, maxLatency);
    });
  }

  private stamp(inc: Inc, data: Uint8Array, prev: number, maxLatency: number): void {
    const packet = decodeMameHubInputPacket(data.subarray(1));
    const now = this.net.now();
    const t = packet.futureInputTime;
    const running = inc.scheduler.nextFrame;
    const nowFrame = Math.floor((now - this.t0) / F);
    if (t < prev || t < running || (prev >= 0 && t > Math.max(prev + 1, nowFrame + maxLatency)))
      this.violations.push(`${inc.name}: packet time ${t} (previous ${prev}, next frame ${running})`);
    const value = scriptValue(inc.script, inForce(inc.script, now), IB);
    for (let port = 0; port < packet.state.length; port++) {
      const want = port === inc.slot ? value[0]! | (value[1]! << 8) : 0;
      if (packet.state[port]!.currentMask !== want)
        this.violations.push(`${inc.name}: packet ${packet.inputId} port ${port} is not the generated input`);
    }
    inc.stamps.push({ time: t, value });
    inc.ids.push(packet.inputId);
    inc.sent.push(data.slice());
  }

  /** Frame f's inputs by the rule: each port, the incarnation active at f, its latest stamp at or before f. */
  inputsAt(f: number): Uint8Array {
    const out = new Uint8Array(this.ports * IB);
    for (const inc of this.incs) {
      if (f < inc.activeFrom || f >= inc.cutAt) continue;
      let v: Uint8Array | undefined;
      for (const s of inc.stamps) if (s.time <= f) v = s.value;
      if (v) for (let k = 0; k < IB; k++) out[inc.slot * IB + k]! |= v[k]!;
    }
    return out;
  }
}

describe('mesh rejoin and mid-game join (star, relayed histories)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 3, max: 4 }),
      links: fc.array(linkArb, { minLength: 12, maxLength: 12 }),
      victim: fc.nat(),
      killFrame: fc.integer({ min: 60, max: 300 }),
      rejoinAfter: fc.option(fc.integer({ min: 0, max: 150 }), { nil: undefined }),
      newcomerAt: fc.option(fc.integer({ min: 20, max: 400 }), { nil: undefined }),
      lateCopiesMs: fc.integer({ min: 0, max: 2000 }),
    },
    { numRuns: RUNS, endOnFailure: true, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) },
  )(
    'a successor under the departed id and a newcomer in a free port: every live peer, after every frame, equals a replay of the generated inputs',
    (plan: Plan) => {
      const { seed, n } = plan;
      const withNewcomer = plan.newcomerAt !== undefined;
      const ports = n + (withNewcomer ? 1 : 0);
      const initial = Array.from({ length: n }, (_, i) => i);
      const victim = 1 + (plan.victim % (n - 1));
      const net = network({ seed, link: { latencyMs: 10 } });
      const star = new RejoinStar(net, ports, initial, Number.NaN);
      const cond = (k: number): [Plan['links'][number], Plan['links'][number]] => [
        plan.links[(2 * k) % 12]!,
        plan.links[(2 * k + 1) % 12]!,
      ];
      for (let i = 1; i < n; i++) star.prepare(`c${i}g0`, cond(i));
      if (plan.rejoinAfter !== undefined) star.prepare(`c${victim}g1`, cond(n));
      if (withNewcomer) star.prepare(`c${n}g0`, cond(n + 1));
      // The game starts a second after the links are up; scripts start after that.
      const t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
      star.t0 = t0;
      const last = Math.max(plan.killFrame + (plan.rejoinAfter ?? 0), plan.newcomerAt ?? 0);
      const until = t0 + (last + 600) * F;
      const scripts = new Map(initial.map((i) => [i, makeScript(seed + i, IB, F, t0 - 200, until)] as const));
      star.start(scripts);
      for (const inc of star.incs) playScript(net, inc.runner, inc.script);
      const victimInc = star.current.get(victim)!;
      let successor: Inc | undefined;
      let newcomer: Inc | undefined;
      net.clock.setTimer(t0 + plan.killFrame * F - net.now(), () => star.kill(victim));
      if (plan.rejoinAfter !== undefined) {
        net.clock.setTimer(t0 + (plan.killFrame + plan.rejoinAfter) * F + 1 - net.now(), () => {
          const script = makeScript(seed + 100, IB, F, net.now(), until);
          successor = star.enter(victim, `c${victim}g1`, script);
          playScript(net, successor.runner, script);
        });
      }
      if (withNewcomer) {
        net.clock.setTimer(t0 + plan.newcomerAt! * F + 1 - net.now(), () => {
          const script = makeScript(seed + 200, IB, F, net.now(), until);
          newcomer = star.enter(n, `c${n}g0`, script);
          playScript(net, newcomer.runner, script);
        });
      }
      // Late copies of the departed peer's packets, once the successor is in.
      let copied = false;
      const poll = (): void => {
        if (!copied && successor && !successor.held) {
          copied = true;
          net.clock.setTimer(plan.lateCopiesMs, () => star.lateCopies(victimInc));
        }
        if (!copied) net.clock.setTimer(50, poll);
      };
      if (plan.rejoinAfter !== undefined) net.clock.setTimer(t0 + plan.killFrame * F - net.now(), poll);
      net.clock.advanceTo(until + Number(process.env.EXTRA_MS ?? 30_000));

      victimInc.cutAt = star.cuts.get(victim) ?? Number.NaN;
      expect(victimInc.cutAt, 'the host cut the victim').not.toBeNaN();
      expect(star.violations).toEqual([]);
      const live = star.incs.filter((i) => i.alive);
      for (const inc of live) expect(inc.scheduler.isMember, `${inc.name} is a member`).toBe(true);
      if (successor) {
        expect(successor.activeFrom).toBeGreaterThan(victimInc.cutAt);
        // A new incarnation: its packet ids are apart from the departed peer's.
        expect(successor.ids[0]).toBe(INCARNATION_IDS);
        expect(successor.scheduler.port).toBe(victim);
      }
      if (newcomer) {
        expect(newcomer.ids[0]).toBe(0);
        expect(newcomer.scheduler.port).toBe(n);
      }
      const all = live.map((i) => ({ name: i.name, sums: i.sums.sums, first: i.sums.first }));
      const frames = Math.max(...all.map((x) => x.first + x.sums.length));
      const expected = replayGenerated(new TestCore({ players: ports, inputBytes: IB }), frames, (f) =>
        star.inputsAt(f),
      );
      expectEveryFrame(all, expected, 100);
      // Everyone still playing reached the end together (within the latency window).
      for (const inc of live) expect(inc.runner.framesRun + inc.sums.first, inc.name).toBeGreaterThan(last + 400);
    },
  );
});

describe('mesh join wire (successors, asked ports)', () => {
  const hostOf = (ports: number, members: number[]) =>
    new MeshPeer({
      id: 0,
      members: members.map((id) => ({ id, port: id })),
      ports,
      inputBytes: 1,
      frameMs: F,
      joinTimeoutMs: 1000,
    });
  const helloPort = (id: number, port: number) => Uint8Array.from([7, 0, 0, 0, id, port, 0x78]);

  test('a candidate asking for a free port gets it; one asking for a taken port is rejected', () => {
    const host = hostOf(4, [0]);
    // (No sync block stored yet: a candidate is refused, there is no state to send it.)
    host.storeState(0, new Uint8Array(8));
    host.receive(3, 'join', helloPort(3, 2), 0);
    // No other member to vote: the candidate is due at once, its notice goes with the next packet.
    expect(host.outbox.filter((e) => e.to === 3 && e.data[0] === 5)).toEqual([]);
    const accepted = host.outbox.length;
    host.poll(0);
    const acc = host.outbox.slice(accepted).find((e) => e.to === 3 && e.channel === 'join');
    expect(acc?.data[0]).toBe(4);
    expect(readU32BE(acc!.data, 1)).toBe(2);
    // Its first packet id: 0 (an id never seen before).
    expect(readU32BE(acc!.data, 17)).toBe(0);
    const taken = hostOf(4, [0, 2]);
    taken.storeState(0, new Uint8Array(8));
    taken.receive(3, 'join', helloPort(3, 2), 0);
    taken.receive(2, 'join', Uint8Array.from([3, 0, 0, 0, 3, 1]), 0);
    expect(taken.outbox.some((e) => e.to === 3 && e.channel === 'join' && e.data[0] === 5)).toBe(true);
  });

  test.prop([fc.uint8Array({ maxLength: 64 }), fc.constantFrom(2, 4, 7)], { numRuns: 200 })(
    'garbage hellos, acceptances and notices are dropped with a typed error, never thrown',
    (bytes, kind) => {
      const cand = new MeshPeer({
        id: 3,
        members: [{ id: 0, port: 0 }],
        candidate: true,
        ports: 4,
        inputBytes: 1,
        frameMs: F,
      });
      cand.storeState(0, new Uint8Array(8));
      const member = hostOf(4, [0, 1]);
      const data = Uint8Array.from([kind, ...bytes]);
      expect(() => cand.receive(0, 'join', data, 0)).not.toThrow();
      expect(() => member.receive(1, 'join', data, 0)).not.toThrow();
      expect(() => member.receive(1, 'input', data, 0)).not.toThrow();
      const history = new MeshRelayHistory(4, 4);
      expect(() => history.record(1, 'input', Uint8Array.from([1, ...bytes]))).not.toThrow();
      expect(MeshRelayHistory.acceptedSync('join', data)).toBe(
        kind === 4 && data.length >= 13 ? readU32BE(data, 9) : undefined,
      );
    },
  );

  test('MeshRelayHistory keeps the last packets per member and replays from the sync frame with a base', () => {
    const ports = 2;
    const h = new MeshRelayHistory(ports, 3);
    const member = new MeshPeer({
      id: 1,
      members: [
        { id: 0, port: 0 },
        { id: 1, port: 1 },
      ],
      ports,
      inputBytes: 1,
      frameMs: F,
    });
    member.storeState(0, new Uint8Array(8));
    // Five packets (frames 0..4): the member's own, as it broadcasts them.
    for (let f = 0; f < 5; f++) {
      member.receive(0, 'input', Uint8Array.from([9]), 0); // dropped: not a packet
      (member as unknown as { sendPacket(f: number): void }).sendPacket(f);
    }
    const packets = member.outbox.filter((e) => e.channel === 'input' && e.data[0] === 1).map((e) => e.data.slice());
    expect(packets.length).toBe(5);
    for (const p of packets) h.record(1, 'input', p);
    const out: Uint8Array[] = [];
    h.replay(2, 1_000_000, (from, channel, data) => {
      expect(from).toBe(1);
      expect(channel).toBe('input');
      out.push(data);
    });
    // Capacity 3: the last three kept; from the last at or before the sync frame (the newest here).
    expect(out[0]![0]).toBe(3);
    expect(readU32BE(out[0]!, 1)).toBe(4);
    expect(out.length).toBe(2);
    h.forget(1);
    expect(h.replay(2, 0, () => {})).toBe(0);
  });
});
