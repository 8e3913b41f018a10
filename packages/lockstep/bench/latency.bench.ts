/**
 * Input latency (frames and ms), stalls and bytes/s per peer of the three lockstep modes, on
 * seed 004's three-peer topology and on 2, 4 and 8 peers with 30 ± 10 ms links. These are
 * simulated-time figures (SimulatedNetwork, virtual clock), deterministic for a given seed; the
 * baseline row of each topology is the ideal: the largest one-way time, in frames.
 */
import { BenchSuite } from '@netplay/bench-kit';
import { TestCore } from '@netplay/state/testing';
import { SimulatedNetwork } from '@netplay/transport';
import type { PeerReport } from '../src/index.js';
import { buildSession, type Mode, peerName, randomInputs } from '../test/sessions.js';

const suite = new BenchSuite('lockstep/latency');
const MODES: Mode[] = ['client-server', 'mesh', 'frame-advance'];
const SESSION_MS = 20_000;

interface Topology {
  readonly name: string;
  readonly n: number;
  readonly frameMs: number;
  /** Sets the links of a fresh network. */
  readonly setup: (net: SimulatedNetwork) => void;
  /** Mean one-way time of the link a→b, for the ideal row. */
  readonly oneWay: (a: number, b: number) => number;
}

const SEED: Record<string, number> = { AB: 20, BC: 40, AC: 60 };
const seedOneWay = (a: number, b: number) => SEED[[peerName(a), peerName(b)].sort().join('')]!;

const topologies: Topology[] = [
  {
    name: 'seed 004 (A-B 20, B-C 40, A-C 60 ms, 20 ms frames)',
    n: 3,
    frameMs: 20,
    setup: (net) => {
      for (let a = 0; a < 3; a++)
        for (let b = a + 1; b < 3; b++) net.setLinkBoth(peerName(a), peerName(b), { latencyMs: seedOneWay(a, b) });
    },
    oneWay: seedOneWay,
  },
  ...[2, 4, 8].map(
    (n): Topology => ({
      name: `${n} peers, 30 ± 10 ms links, 60 Hz`,
      n,
      frameMs: 1000 / 60,
      setup: (net) => net.setDefaultLink({ latencyMs: 20, jitterMs: 20 }),
      oneWay: () => 30,
    }),
  ),
];

function run(mode: Mode, topo: Topology): PeerReport[] {
  const net = new SimulatedNetwork({ seed: 2026 });
  topo.setup(net);
  const s = buildSession(mode, net, topo.n, () => new TestCore({ players: topo.n, inputBytes: 1 }), {
    frameMs: topo.frameMs,
    seed: 7,
    log: false,
  });
  const end = s.t0 + SESSION_MS;
  // Inputs start after two seconds, once the ping estimates have settled.
  for (const [i, p] of s.peers.entries()) randomInputs(net, p.runner, 1, 1000 + i, topo.frameMs, s.t0 + 2000, end, 10);
  net.clock.advanceTo(end);
  return s.peers.map((p) => p.runner.report());
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const fmt = (x: number) => Math.round(x * 100) / 100;

for (const topo of topologies) {
  // Ideal: every player's input reaches the farthest peer in one way.
  const idealMs = mean(
    Array.from({ length: topo.n }, (_, i) => {
      let m = 0;
      for (let j = 0; j < topo.n; j++) if (j !== i) m = Math.max(m, topo.oneWay(i, j));
      return m;
    }),
  );
  const ideal = `${topo.name}: ideal (largest one-way)`;
  suite.record({ name: ideal, value: fmt(idealMs / topo.frameMs), unit: 'frames', note: `${fmt(idealMs)} ms` });
  for (const mode of MODES) {
    const reports = run(mode, topo);
    const frames = mean(reports.map((r) => r.meanLatencyFrames));
    const ms = mean(reports.map((r) => r.meanLatencyMs));
    const perPlayer = reports.map((r) => fmt(r.meanLatencyFrames)).join('/');
    suite.record({
      name: `${topo.name}: ${mode} input latency`,
      value: fmt(frames),
      unit: 'frames',
      baseline: ideal,
      ratio: fmt(frames / (idealMs / topo.frameMs)),
      note: `${fmt(ms)} ms; per player ${perPlayer}; stalls ${reports.reduce((a, r) => a + r.stalls, 0)} (${fmt(reports.reduce((a, r) => a + r.stallMs, 0))} ms); lower is better`,
    });
    suite.record({
      name: `${topo.name}: ${mode} bytes/s per peer`,
      value: Math.round(mean(reports.map((r) => r.bytesPerSecond))),
      unit: 'B/s',
      note: `max ${Math.round(Math.max(...reports.map((r) => r.bytesPerSecond)))} B/s (the server, in client-server); wire bytes incl. 16-byte simulated headers, acks, pings`,
    });
  }
}

suite.finish();
