/**
 * Rollback engine figures:
 * - engine overhead: session frames per second with a no-op core for 2, 4, 8, 16 players,
 *   prediction window 8 and a rollback on every frame, against the same loop calling the core
 *   directly (same advances, saves and loads, no session);
 * - CHIP-8 Space Racer over the simulated network at 60, 120 and 200 ms RTT: rollback depth,
 *   resimulated frames per second and CPU per frame against the 16.7 ms budget;
 * - bandwidth per player per second at 60 fps.
 */
import { BenchSuite } from '@netplay/bench-kit';
import type { Core } from '@netplay/state';
import { ManualClock } from '@netplay/transport';
import { CoreDriver, P2PSession, type SessionRequest } from '../src/index.js';
import { spaceRacer } from '../test/helpers.js';
import { inputPattern, Mesh } from '../test/mesh.js';

/** A core that does nothing: measures the session alone. */
class NoopCore implements Core {
  frame = 0;
  readonly stateBytes = 4;
  constructor(
    readonly ports: number,
    readonly inputBytes: number,
  ) {}
  setInput(_port: number, _input: Uint8Array): void {}
  advance(): void {
    this.frame++;
  }
  saveInto(target: Uint8Array): number {
    target[0] = this.frame;
    return 4;
  }
  load(state: Uint8Array): void {
    this.frame = state[0]!;
  }
  checksum(): bigint {
    return 0n;
  }
  reset(): void {
    this.frame = 0;
  }
}

const suite = new BenchSuite('rollback/engine');
const DEPTH = 7; // inputs arrive 7 frames late: every frame rolls back 7 frames (window 8)

/** N sessions wired in memory, every message delivered DEPTH ticks late; returns a step of one peer-frame. */
function sessionLoop(players: number, checksumInterval = 0): { step: () => void; first: P2PSession } {
  const input = new Uint8Array(2);
  const clock = new ManualClock();
  const names = Array.from({ length: players }, (_, i) => `p${i}`);
  // Preallocated message slots per delivery tick, so the harness allocates nothing per frame.
  interface Slot {
    from: number;
    to: string;
    channel: string;
    bytes: Uint8Array;
    view: Uint8Array;
  }
  const perTick = players * players * 2;
  const inFlight = Array.from({ length: DEPTH + 1 }, () => ({
    n: 0,
    slots: Array.from({ length: perTick }, (): Slot => {
      const bytes = new Uint8Array(512);
      return { from: 0, to: '', channel: '', bytes, view: bytes.subarray(0, 0) };
    }),
  }));
  const views = Array.from({ length: perTick * (DEPTH + 1) }, () => new Map<number, Uint8Array>());
  let tick = 0;
  const sessions: P2PSession[] = [];
  const drivers: CoreDriver[] = [];
  for (let i = 0; i < players; i++) {
    const s = new P2PSession({
      players,
      inputBytes: 2,
      localPlayer: i,
      remotes: names.flatMap((peer, j) => (j === i ? [] : [{ peer, player: j }])),
      isHost: i === 0,
      hostPeer: 'p0',
      clock,
      maxPrediction: 8,
      checksumInterval,
      disconnectMs: 0,
      interruptMs: 1e9,
      send: (peer, channel, data) => {
        const q = inFlight[(tick + DEPTH) % (DEPTH + 1)]!;
        const slotIndex = q.n++;
        const slot = q.slots[slotIndex]!;
        slot.from = i;
        slot.to = peer;
        slot.channel = channel;
        slot.bytes.set(data);
        const cache = views[((tick + DEPTH) % (DEPTH + 1)) * perTick + slotIndex]!;
        let v = cache.get(data.length);
        if (v === undefined) {
          v = slot.bytes.subarray(0, data.length);
          cache.set(data.length, v);
        }
        slot.view = v;
      },
    });
    sessions.push(s);
    drivers.push(new CoreDriver(new NoopCore(players, 2), s.ringFrames));
  }
  const byName = new Map(names.map((n, i) => [n, sessions[i]!]));
  let next = 0;
  /** One peer-frame; after the last peer, deliver the messages due and move the clock. */
  const step = () => {
    if (next === 0) {
      const due = inFlight[tick % (DEPTH + 1)]!;
      for (let k = 0; k < due.n; k++) {
        const m = due.slots[k]!;
        byName.get(m.to)!.receive(names[m.from]!, m.channel, m.view);
      }
      due.n = 0;
    }
    const s = sessions[next]!;
    // A new input every frame: every late input is a misprediction.
    input[0] = (tick * 31 + next) & 0xff;
    s.addLocalInput(input);
    const reqs: readonly SessionRequest[] = s.advanceFrame();
    drivers[next]!.run(reqs, s);
    if (++next === players) {
      next = 0;
      clock.advance(16);
      tick++;
    }
  };
  return { step, first: sessions[0]! };
}

// Warm the JIT up on the session code before the first measurement.
{
  const warm = sessionLoop(4).step;
  for (let i = 0; i < 40_000; i++) warm();
}

for (const players of [2, 4, 8, 16]) {
  // Baseline: the core work of one peer-frame with the same rollback, called directly.
  const core = new NoopCore(players, 2);
  const driverCore = new CoreDriver(core, 10);
  const input = new Uint8Array(2);
  const saver = (t: Uint8Array) => core.saveInto(t);
  const loader = (s: Uint8Array) => core.load(s);
  let f = 0;
  let peer = 0;
  const baselineName = `direct core loop, ${players} players`;
  // One call = one peer-frame (so the kit's allocation pass stays short).
  suite.measure(
    baselineName,
    () => {
      if (f > DEPTH) {
        driverCore.ring.load(f - DEPTH, loader);
        for (let k = 0; k < DEPTH; k++) {
          for (let p = 0; p < players; p++) core.setInput(p, input);
          core.advance();
          driverCore.ring.save(f - DEPTH + k + 1, saver);
        }
      }
      for (let p = 0; p < players; p++) core.setInput(p, input);
      core.advance();
      driverCore.ring.save(f + 1, saver);
      if (++peer === players) {
        peer = 0;
        f++;
      }
    },
    { note: `${DEPTH}-frame rollback per frame` },
  );

  const { step, first } = sessionLoop(players);
  for (let i = 0; i < 60 * players; i++) step(); // synchronize and fill the window
  suite.measure(`P2PSession, ${players} players`, step, {
    baseline: baselineName,
    note: 'peer-frames/s incl. encode/decode of N-1 messages each way',
  });
  // The same with the checksum exchange on (default interval): it must allocate nothing either.
  const withSums = sessionLoop(players, 60);
  // Warm-up over 12 exchanges, so that the harness has made its per-slot views of every message length.
  for (let i = 0; i < 720 * players; i++) withSums.step();
  suite.measure(`P2PSession, ${players} players, checksums every 60 frames`, withSums.step, {
    baseline: `P2PSession, ${players} players`,
    note: 'B/op: allocation per peer-frame with checksums on (issue 16: was ~85 B)',
  });
  const s0 = first.stats;
  suite.record({
    name: `rollback depth, ${players} players`,
    value: s0.resimulatedFrames / Math.max(1, s0.rollbacks),
    unit: 'frames',
    note: `${s0.rollbacks} rollbacks in ${s0.currentFrame} frames`,
  });
}
suite.finish();

// ---- CHIP-8 Space Racer over the simulated network -------------------------------------------

const chip = new BenchSuite('rollback/chip8');
const FRAMES = 600;
{
  // The same 2-player game with the same inputs, without netplay.
  const core = spaceRacer();
  const inputOf = inputPattern(60);
  const pad = new Uint8Array(core.inputBytes);
  const t0 = performance.now();
  for (let f = 0; f < FRAMES; f++) {
    for (let p = 0; p < 2; p++) {
      pad.fill(inputOf(p, f));
      core.setInput(p, pad);
    }
    core.advance();
  }
  chip.record({
    name: 'CHIP-8 frame, no netplay',
    value: ((performance.now() - t0) * 1000) / FRAMES,
    unit: 'us/frame',
    note: 'setInput + advance, same inputs',
  });
  chip.record({ name: 'frame budget (60 fps)', value: 1e6 / 60, unit: 'us/frame' });
}
{
  // Warm-up run (JIT) before the measured ones.
  const warm = new Mesh({ players: 2, seed: 1, makeCore: () => spaceRacer(), inputOf: inputPattern(1), verify: false });
  for (let i = 0; i < FRAMES; i++) warm.tick();
}
for (const rtt of [60, 120, 200]) {
  const players = 2;
  const mesh = new Mesh({
    players,
    seed: rtt,
    makeCore: () => spaceRacer(),
    inputOf: inputPattern(rtt),
    link: { latencyMs: rtt / 2, jitterMs: 4 },
    verify: false,
    cpuClock: () => performance.now(),
  });
  for (let i = 0; i < FRAMES; i++) mesh.tick();
  const r = mesh.rigs[1]!;
  const st = r.session.stats;
  const seconds = (FRAMES * 16) / 1000;
  chip.record({
    name: `${rtt} ms RTT: mean rollback depth`,
    value: st.resimulatedFrames / Math.max(1, st.rollbacks),
    unit: 'frames',
    note: `max ${st.maxRollbackDepth}, ${st.rollbacks} rollbacks / ${st.currentFrame} frames, inputs change every 4 frames`,
  });
  chip.record({
    name: `${rtt} ms RTT: resimulated frames`,
    value: st.resimulatedFrames / seconds,
    unit: 'frames/s',
    note: 'per peer, game time',
  });
  chip.record({
    name: `${rtt} ms RTT: CPU per frame`,
    value: (r.cpuMs * 1000) / st.currentFrame,
    unit: 'us/frame',
    baseline: 'frame budget (60 fps)',
    note: 'session + core incl. resimulation; ratio = share of the 16.7 ms budget',
  });
  let payload = 0;
  let wire = 0;
  for (const rig of mesh.rigs) {
    for (const p of rig.session.peerStats()) payload += p.bytesSent;
    for (let j = 0; j < players; j++) {
      const c = rig.conns.get(`p${j}`);
      if (c !== undefined) wire += c.stats.bytesSent;
    }
  }
  chip.record({
    name: `${rtt} ms RTT: bandwidth per player`,
    value: payload / players / seconds,
    unit: 'B/s',
    note: 'session messages (inputs resent until acked, checksums), 62.5 fps',
  });
  chip.record({
    name: `${rtt} ms RTT: on the wire per player`,
    value: wire / players / seconds,
    unit: 'B/s',
    note: 'incl. simulated transport headers, acks and pings',
  });
}
// Bandwidth as players grow (JS test core; every peer sends to every other).
for (const players of [4, 8, 16]) {
  const { TestCore } = await import('@netplay/state/testing');
  const mesh = new Mesh({
    players,
    seed: players,
    makeCore: () => new TestCore({ players }),
    inputOf: inputPattern(players),
    link: { latencyMs: 30, jitterMs: 4 },
    verify: false,
  });
  const ticks = 300;
  for (let i = 0; i < ticks; i++) mesh.tick();
  let payload = 0;
  for (const rig of mesh.rigs) for (const p of rig.session.peerStats()) payload += p.bytesSent;
  chip.record({
    name: `60 ms RTT, ${players} players: bandwidth per player`,
    value: payload / players / ((ticks * 16) / 1000),
    unit: 'B/s',
    note: `to ${players - 1} peers, 2-byte inputs`,
  });
}
chip.finish();
