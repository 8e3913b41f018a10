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
import { CoreDriver } from '../src/index.js';
import { DEPTH, NoopCore, sessionLoop } from '../test/engine-loop.js';
import { spaceRacer } from '../test/helpers.js';
import { inputPattern, Mesh } from '../test/mesh.js';

const suite = new BenchSuite('rollback/engine');
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
  // Synchronize, fill the window, and let V8 settle (shorter, the 2-player rows measured 250-320 B
  // per peer-frame of re-tiering that the allocation test, warmed up longer, does not see).
  for (let i = 0; i < Math.max(60 * players, 20_000); i++) step();
  suite.measure(`P2PSession, ${players} players`, step, {
    baseline: baselineName,
    note: 'peer-frames/s incl. encode/decode of N-1 messages each way',
  });
  // The same with the checksum exchange on (default interval): it must allocate nothing either.
  const withSums = sessionLoop(players, 60);
  // Warm-up over 12 exchanges, so that the harness has made its per-slot views of every message length.
  for (let i = 0; i < Math.max(720 * players, 20_000); i++) withSums.step();
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
