import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import type { Connection, SimulatedNetwork } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_SERVER_CHANNELS,
  ClientServerClient,
  ClientServerServer,
  decodeFaMessage,
  FRAME_ADVANCE_CHANNELS,
  FrameAdvancePeer,
  LockstepRunner,
  type PeerReport,
} from '../src/index.js';
import {
  expectDeterministic,
  link,
  mesh,
  meshLinksArb,
  midFrameInputs,
  network,
  PATIENT,
  type SimPeer,
} from './harness.js';
import {
  equalBytes,
  expectEveryFrame,
  frameChecksums,
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

interface FaSession {
  net: SimulatedNetwork;
  peers: SimPeer<TestCore>[];
  t0: number;
  conns: Map<number, Connection>[];
}

function faSession(
  net: SimulatedNetwork,
  n: number,
  opts: {
    extraDelayMs?: number;
    equalize?: boolean;
    known?: (i: number, j: number) => number;
    seed?: number;
    /** Every peer drives port 0 (a shared device): the order of events in a frame matters. */
    shared?: boolean;
    /** Ports of the core (default n). */
    ports?: number;
    /** The host's core (peer 0) tracks its savestate pages (default false). */
    trackPages?: boolean;
  } = {},
): FaSession {
  const names = Array.from({ length: n }, (_, i) => String.fromCharCode(65 + i));
  const conns = mesh(net, names, FRAME_ADVANCE_CHANNELS);
  const t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
  const peers: SimPeer<TestCore>[] = [];
  for (let i = 0; i < n; i++) {
    const others = [...conns[i]!.keys()];
    const initialOneWayMs: Record<number, number> = {};
    if (opts.known) for (const j of others) initialOneWayMs[j] = opts.known(i, j);
    const scheduler = new FrameAdvancePeer({
      id: i,
      port: opts.shared ? 0 : i,
      peers: others,
      ports: opts.ports ?? n,
      inputBytes: 1,
      frameMs: F,
      startMs: t0,
      seed: (opts.seed ?? 1) * 31 + i,
      extraDelayMs: opts.extraDelayMs ?? 0,
      equalize: opts.equalize ?? false,
      initialOneWayMs,
      liveness: PATIENT,
    });
    // The host's core may track its pages: the runner hands them to the late-join delta.
    const core = new TestCore({
      players: opts.ports ?? n,
      inputBytes: 1,
      ...(opts.trackPages && i === 0 ? { trackPages: 4096 } : {}),
    });
    const runner = new LockstepRunner({ clock: net.clock, scheduler, core, log: true });
    for (const [j, c] of conns[i]!) runner.addPeer(j, c);
    peers.push({ name: names[i]!, scheduler, core, runner });
  }
  return { net, peers, t0, conns };
}

// Seed 004's topology: one-way A–B 20 ms, B–C 40 ms, A–C 60 ms.
const SEED_LINKS: Record<string, number> = { AB: 20, BC: 40, AC: 60 };
function seedLatency(a: number, b: number): number {
  const k = [String.fromCharCode(65 + a), String.fromCharCode(65 + b)].sort().join('');
  return SEED_LINKS[k]!;
}
function seedNet(): SimulatedNetwork {
  const net = network({ seed: 4, link: { latencyMs: 10 } });
  for (let a = 0; a < 3; a++)
    for (let b = a + 1; b < 3; b++)
      net.setLinkBoth(String.fromCharCode(65 + a), String.fromCharCode(65 + b), { latencyMs: seedLatency(a, b) });
  return net;
}
/** Seed 004's rule, from the links alone: the first frame starting at or after t + the largest one-way time. */
function seedTargetFrame(player: number, tInFrames: number, delayOverride?: number): number {
  let d = 0;
  for (let o = 0; o < 3; o++) if (o !== player) d = Math.max(d, seedLatency(player, o));
  return Math.ceil((tInFrames * F + (delayOverride ?? d)) / F);
}
function firstFrameWith(log: readonly { frame: number; inputs: Uint8Array }[], port: number, value: number): number {
  return log.find((f) => f.inputs[port] === value)?.frame ?? -1;
}

describe('frame-advance (seed 004)', () => {
  it('schedules an input A makes in the middle of frame 1 for frame 5, on every peer', () => {
    const s = faSession(seedNet(), 3, { known: seedLatency });
    const a = s.peers[0]!;
    s.net.clock.setTimer(s.t0 + F / 2 - s.net.now(), () => a.runner.setLocalInput(Uint8Array.of(0x10)));
    s.net.clock.advanceTo(s.t0 + 20 * F);
    // Seed frames count from 1; ours from 0. Frame 1 = our 0, frame 5 = our 4.
    const expected = seedTargetFrame(0, 0.5);
    expect(expected).toBe(4);
    for (const p of s.peers) expect(firstFrameWith(p.runner.log, 0, 0x10), p.name).toBe(expected);
    // Nobody stalled: the advance messages arrive just in time.
    for (const p of s.peers) expect(p.runner.report().stalls, p.name).toBe(0);
    expectDeterministic(s.peers, () => new TestCore({ players: 3, inputBytes: 1 }), 20);
  });

  it('two changes a player makes for the same frame apply in the order made: the later wins, on every peer', () => {
    // Same-frame events are ordered by their random keys; a player's own keys for one frame must
    // rise, or a press and its release within a frame could apply released-then-pressed (the
    // button held). 24 seeds: a random second key falls below the first in about half of them.
    for (let seed = 1; seed <= 24; seed++) {
      const s = faSession(seedNet(), 3, { known: seedLatency, seed });
      const b = s.peers[1]!;
      s.net.clock.setTimer(s.t0 + 3.5 * F - s.net.now(), () => {
        b.runner.setLocalInput(Uint8Array.of(0x10));
        b.runner.setLocalInput(Uint8Array.of(0x20));
        b.runner.setLocalInput(Uint8Array.of(0x30));
      });
      s.net.clock.advanceTo(s.t0 + 20 * F);
      for (const p of s.peers) {
        expect(firstFrameWith(p.runner.log, 1, 0x30), `seed ${seed} ${p.name}`).toBeGreaterThan(0);
        expect(firstFrameWith(p.runner.log, 1, 0x10), `seed ${seed} ${p.name}`).toBe(-1);
        expect(firstFrameWith(p.runner.log, 1, 0x20), `seed ${seed} ${p.name}`).toBe(-1);
      }
    }
  });

  it('gives each player the latency the seed derives (B lowest), and equal latencies when equalized', () => {
    for (const equalize of [false, true]) {
      const s = faSession(seedNet(), 3, { known: seedLatency, equalize });
      for (const [i, p] of s.peers.entries()) midFrameInputs(s.net, p.runner, 1, s.t0 + i * F, F, 3, s.t0 + 200 * F, i);
      s.net.clock.advanceTo(s.t0 + 210 * F);
      const reports = s.peers.map((p) => p.runner.report());
      const globalMax = 60;
      for (const [i, r] of reports.entries()) {
        expect(r.latencySamples, `${i}`).toBeGreaterThan(50);
        const frames = seedTargetFrame(i, 0.5, equalize ? globalMax : undefined);
        // The frame applying an input made at mid-frame 0 is `frames`; latency in frames and in ms follow.
        expect(r.meanLatencyFrames, `player ${i}`).toBe(frames);
        expect(r.maxLatencyFrames, `player ${i}`).toBe(frames);
        expect(r.meanLatencyMs, `player ${i}`).toBe(frames * F - F / 2);
        expect(r.stalls).toBe(0);
      }
      if (!equalize) {
        expect(reports[1]!.meanLatencyMs).toBeLessThan(reports[0]!.meanLatencyMs);
        expect(reports[1]!.meanLatencyMs).toBeLessThan(reports[2]!.meanLatencyMs);
      }
      expectDeterministic(s.peers, () => new TestCore({ players: 3, inputBytes: 1 }), 200);
    }
  });

  it('the extra delay adds whole frames', () => {
    const s = faSession(seedNet(), 3, { known: seedLatency, extraDelayMs: 2 * F });
    for (const [i, p] of s.peers.entries()) midFrameInputs(s.net, p.runner, 1, s.t0 + i * F, F, 4, s.t0 + 100 * F, i);
    s.net.clock.advanceTo(s.t0 + 110 * F);
    for (const [i, p] of s.peers.entries()) {
      expect(p.runner.report().meanLatencyFrames).toBe(seedTargetFrame(i, 0.5) + 2);
    }
  });

  it('on the same links, P2P approaches the one-way time and client-server the round trip', () => {
    const p2p = faSession(seedNet(), 3, { known: seedLatency });
    for (const [i, p] of p2p.peers.entries())
      midFrameInputs(p2p.net, p.runner, 1, p2p.t0 + i * F, F, 3, p2p.t0 + 200 * F, i);
    p2p.net.clock.advanceTo(p2p.t0 + 210 * F);
    const p2pReports = p2p.peers.map((p) => p.runner.report());

    // Client-server with the server on B (the best-connected peer), same links.
    for (const serverAt of [0, 1]) {
      const net = seedNet();
      const names = ['A', 'B', 'C'];
      const conns = new Map<number, ReturnType<typeof link>>();
      for (let i = 0; i < 3; i++)
        if (i !== serverAt) conns.set(i, link(net, names[i]!, names[serverAt]!, CLIENT_SERVER_CHANNELS));
      const t0 = Math.ceil(net.now() / 1000) * 1000 + 1000;
      const server = new ClientServerServer({
        id: serverAt,
        port: serverAt,
        ports: 3,
        inputBytes: 1,
        frameMs: F,
        startMs: t0,
      });
      const sRunner = new LockstepRunner({
        clock: net.clock,
        scheduler: server,
        core: new TestCore({ players: 3, inputBytes: 1 }),
      });
      const runners = new Map<number, LockstepRunner<TestCore>>([[serverAt, sRunner]]);
      for (const [i, c] of conns) {
        const client = new ClientServerClient({ id: i, server: serverAt, ports: 3, inputBytes: 1, frameMs: F });
        const r = new LockstepRunner({
          clock: net.clock,
          scheduler: client,
          core: new TestCore({ players: 3, inputBytes: 1 }),
        });
        r.addPeer(serverAt, c.ab);
        sRunner.addPeer(i, c.ba);
        server.addClient(i, i);
        runners.set(i, r);
      }
      sRunner.pump();
      for (const [i, r] of runners) midFrameInputs(net, r, 1, t0 + i * F, F, 3, t0 + 200 * F, i);
      net.clock.advanceTo(t0 + 210 * F);
      const cs = new Map<number, PeerReport>([...runners].map(([i, r]) => [i, r.report()]));
      for (let i = 0; i < 3; i++) {
        const r = cs.get(i)!;
        const p = p2pReports[i]!;
        let maxOneWay = 0;
        for (let o = 0; o < 3; o++) if (o !== i) maxOneWay = Math.max(maxOneWay, seedLatency(i, o));
        // P2P: within one frame above the largest one-way time.
        expect(p.meanLatencyMs).toBeGreaterThanOrEqual(maxOneWay);
        expect(p.meanLatencyMs).toBeLessThanOrEqual(maxOneWay + F);
        if (i === serverAt) continue;
        // Client-server: at least the round trip to the server, within a frame of it.
        const rtt = 2 * seedLatency(i, serverAt);
        expect(r.meanLatencyMs).toBeGreaterThanOrEqual(rtt);
        expect(r.meanLatencyMs).toBeLessThanOrEqual(rtt + F);
      }
      // C is the far player: P2P beats client-server for it whichever peer serves.
      expect(p2pReports[2]!.meanLatencyMs).toBeLessThan(cs.get(2)!.meanLatencyMs);
    }
  });

  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 2, max: 4 }),
      links: meshLinksArb,
      extraDelayMs: fc.integer({ min: 0, max: 40 }),
      equalize: fc.boolean(),
      shared: fc.boolean(),
    },
    { numRuns: 25, endOnFailure: true },
  )(
    'every peer, after every frame, matches an offline replay of the generated inputs at their stamped frames',
    ({ seed, n, links, extraDelayMs, equalize, shared }) => {
      const net = network({ seed, link: { latencyMs: 10 } });
      let k = 0;
      for (let a = 0; a < n; a++)
        for (let b = 0; b < n; b++)
          if (a !== b) net.setLink(String.fromCharCode(65 + a), String.fromCharCode(65 + b), links[k++]!);
      const s = faSession(net, n, { extraDelayMs, equalize, seed, shared });
      const until = s.t0 + 300 * F;
      const scripts = s.peers.map((_, i) => makeScript(seed + i, 1, F, s.t0 - 200, until));
      const sums = s.peers.map((p) => frameChecksums(p.core));
      const stamps = recordFaStamps(s, scripts, extraDelayMs, shared);
      for (const [i, p] of s.peers.entries()) playScript(net, p.runner, scripts[i]!);
      // Inputs stop at `until`; a few more seconds let peers behind a retransmission catch up.
      net.clock.advanceTo(until + 5000);
      expect(stamps.violations).toEqual([]);
      const frames = Math.max(...sums.map((x) => x.length));
      const replay = replayGenerated(new TestCore({ players: n, inputBytes: 1 }), frames, faInputs(stamps.events, n));
      expectEveryFrame(
        s.peers.map((p, i) => ({ name: p.name, sums: sums[i]! })),
        replay,
        100,
      );
    },
  );
});

/** A generated input as a frame-advance peer stamped it: the frame and order key of the event that carried it. */
interface FaStamp {
  readonly frame: number;
  readonly key: number;
  readonly client: number;
  readonly port: number;
  readonly value: Uint8Array;
}

/**
 * Records, from what each peer sends when an input is handed in (its event, on one of its
 * connections), the frame and order key every generated input was stamped with, and checks them
 * against seed 004's rule: the frame starts after the moment the input was made (so no peer has
 * run it) and at most the largest one-way time a link here can give (under 400 ms) plus the extra
 * delay and one frame later; the event carries the GENERATED value in force at that moment, from
 * this client, for its port. The replay then uses the generated value.
 */
function recordFaStamps(
  s: FaSession,
  scripts: readonly Script[],
  extraDelayMs: number,
  shared: boolean,
): { events: FaStamp[]; violations: string[] } {
  const rec = { events: [] as FaStamp[], violations: [] as string[] };
  for (const [i, p] of s.peers.entries()) {
    const [first] = s.conns[i]!.values();
    tapFaStamps(s, rec, i, first!, p.name, scripts[i]!, extraDelayMs, shared ? 0 : i, false);
  }
  return rec;
}

/** Records client `i`'s events as it sends them on `conn` (see {@link recordFaStamps}); `joiner`: no lower time bound (its clock is aligned on the host's frame, not on t0). */
function tapFaStamps(
  s: FaSession,
  rec: { events: FaStamp[]; violations: string[] },
  i: number,
  conn: Connection,
  name: string,
  script: Script,
  extraDelayMs: number,
  port: number,
  joiner: boolean,
): void {
  tapSends(conn, (channel, data) => {
    if (channel !== 'sched' || data[0] !== 1) return;
    const m = decodeFaMessage(data, 1);
    if (m.type !== 'event') return;
    const e = m.event;
    const now = s.net.now();
    const start = s.t0 + e.frame * F;
    if ((!joiner && start <= now) || start > now + 400 + extraDelayMs + F)
      rec.violations.push(`${name}: input made at ${now} stamped for frame ${e.frame} (starts at ${start})`);
    const value = scriptValue(script, inForce(script, now), 1);
    if (e.client !== i || e.port !== port || !equalBytes(e.input, value))
      rec.violations.push(`${name}: event for frame ${e.frame} is not the generated input of its port`);
    rec.events.push({ frame: e.frame, key: e.key, client: e.client, port: e.port, value });
  });
}

/** The inputs of every frame by the rule: a frame's events apply in (key, client, port, input) order, each port keeps its last value. */
function faInputs(events: readonly FaStamp[], ports: number): (f: number) => Uint8Array {
  const sorted = [...events].sort(
    (a, b) => a.frame - b.frame || a.key - b.key || a.client - b.client || a.port - b.port || a.value[0]! - b.value[0]!,
  );
  const current = new Uint8Array(ports);
  let at = 0;
  return (f) => {
    while (at < sorted.length && sorted[at]!.frame <= f) {
      const e = sorted[at++]!;
      current.set(e.value, e.port);
    }
    return current.slice();
  };
}

function faJoin(
  seed: number,
  n: number,
  joinAtFrame: number,
  conditions: Parameters<typeof network>[0]['link'],
  trackPages = false,
): LockstepRunner<TestCore> {
  const net = network({ seed, link: conditions });
  const s = faSession(net, n, { seed, ports: n + 1, trackPages });
  const until = s.t0 + (joinAtFrame + 300) * F;
  const joinAt = s.t0 + joinAtFrame * F;
  // The newcomer's script is made once its links are up (see below).
  const scripts = Array.from({ length: n }, (_, i) => makeScript(seed + i, 1, F, s.t0 - 200, until));
  const sums = s.peers.map((p) => ({ name: p.name, sums: frameChecksums(p.core), first: 0 }));
  const rec = recordFaStamps(s, scripts, 0, false);
  for (const [i, p] of s.peers.entries()) playScript(net, p.runner, scripts[i]!);
  net.clock.advanceTo(joinAt);
  // The shell connects the newcomer to every peer, then it asks the host (peer 0).
  const newcomer = String.fromCharCode(65 + n);
  const conns = s.peers.map((_, i) => link(net, newcomer, String.fromCharCode(65 + i), FRAME_ADVANCE_CHANNELS));
  // Its inputs start once it is linked (setting links up under loss takes time; a script starting
  // before would fire late: see `playScript`).
  scripts.push(makeScript(seed + 9, 1, F, net.now(), until));
  const scheduler = new FrameAdvancePeer({
    id: n,
    port: n,
    peers: s.peers.map((_, i) => i),
    candidate: true,
    host: 0,
    ports: n + 1,
    inputBytes: 1,
    frameMs: F,
    seed: seed + 5,
    liveness: PATIENT,
  });
  const core = new TestCore({ players: n + 1, inputBytes: 1 });
  const joinerSums = frameChecksumsFrom(core, scheduler);
  tapFaStamps(s, rec, n, conns[0]!.ab, newcomer, scripts[n]!, 0, n, true);
  const runner = new LockstepRunner({ clock: net.clock, scheduler, core, log: true });
  for (const [i, c] of conns.entries()) {
    runner.addPeer(i, c.ab);
    s.peers[i]!.runner.addPeer(n, c.ba);
  }
  runner.pump();
  playScript(net, runner, scripts[n]!);
  net.clock.advanceTo(until + 5000);
  // Every peer (the newcomer from the frame of the state it loaded) matches a replay of the generated inputs.
  expect(rec.violations).toEqual([]);
  const all = [...sums, { name: newcomer, ...joinerSums }];
  const frames = Math.max(...all.map((x) => x.first + x.sums.length));
  expectEveryFrame(
    all,
    replayGenerated(new TestCore({ players: n + 1, inputBytes: 1 }), frames, faInputs(rec.events, n + 1)),
    50,
  );
  expect(scheduler.isMember).toBe(true);
  expect(runner.log[0]!.frame).toBeGreaterThan(0);
  expect(runner.report().latencySamples).toBeGreaterThan(0);
  for (const p of s.peers) expect(p.runner.log.some((f) => f.inputs[n] !== 0)).toBe(true);
  expectDeterministic(
    [...s.peers, { name: newcomer, scheduler, core, runner }],
    () => new TestCore({ players: n + 1, inputBytes: 1 }),
    50,
  );
  return runner;
}

describe('frame-advance late join (our addition)', () => {
  test.prop(
    {
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      n: fc.integer({ min: 2, max: 3 }),
      joinAtFrame: fc.integer({ min: 1, max: 300 }),
      link: fc.record({
        latencyMs: fc.integer({ min: 0, max: 60 }),
        jitterMs: fc.integer({ min: 0, max: 30 }),
        loss: fc.double({ min: 0, max: 0.1, noNaN: true }),
        reorder: fc.double({ min: 0, max: 0.3, noNaN: true }),
      }),
      trackPages: fc.boolean(),
    },
    { numRuns: 10, endOnFailure: true },
  )(
    'a peer joining at any frame gets the state and every event since, and stays in step',
    ({ seed, n, joinAtFrame, link: conditions, trackPages }) => {
      faJoin(seed, n, joinAtFrame, conditions, trackPages);
    },
  );

  it('gives the newcomer the input latency its links give (a steady 20 ms link)', () => {
    const runner = faJoin(3, 2, 250, { latencyMs: 20 });
    const r = runner.report();
    expect(r.latencySamples).toBeGreaterThan(10);
    // One-way 20 ms with 20 ms frames: at most the next frame start + one frame, then the frame.
    expect(r.maxLatencyFrames).toBeLessThanOrEqual(3);
    expect(r.maxLatencyMs).toBeLessThanOrEqual(3 * F);
  });
});
