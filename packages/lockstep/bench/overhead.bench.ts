/**
 * Scheduler overhead per frame, next to the core's own frame: two peers of each mode exchange
 * messages in process (no transport), one frame each per call, with an input change every 8th
 * frame. ops/s = frames (of both peers) per second; B/op = heap bytes allocated per frame.
 *
 * Goal: 0 B/frame (the project's "hot paths allocate nothing"). Each mode runs twice: with a
 * 60 Hz clock in fractional ms (as `performance.now()` gives), and with whole ms. With fractional
 * times V8 boxes the time values passed between functions as heap numbers (16 B each), which is
 * not per-message garbage of the scheduler: the whole-ms rows show what the schedulers themselves
 * allocate. The driver loop below makes one itself, its `now` (16 B per call = 8 B per frame of
 * each fractional row; a caller reading `performance.now()` gets a new number per call too).
 * Before issue 6's follow-up: ≈150 B (client-server), ≈500–630 B (mesh), ≈45–115 B
 * (frame-advance) per frame. With the GC-profiler kit (Nov 2026), whole-ms: 0 / 0 / 1.0 B (was
 * 1.9–4.2 B: frame-advance's own u32 event keys came back boxed from `Prng.nextU32`; what is left
 * is the wire decoder returning received keys ≥ 2^31 boxed).
 */
import { BenchSuite } from '@netplay/bench-kit';
import { TestCore } from '@netplay/state/testing';
import {
  ClientServerClient,
  ClientServerServer,
  FrameAdvancePeer,
  type LockstepScheduler,
  MeshPeer,
  runFrame,
} from '../src/index.js';

const suite = new BenchSuite('lockstep/overhead');
const checks: (() => void)[] = [];

const baseCore = new TestCore({ players: 2, inputBytes: 2 });
const zeros = new Uint8Array(4);
suite.measure('TestCore frame (2 ports, set inputs + advance)', () => runFrame(baseCore, zeros, 0), {
  note: 'baseline: the core alone',
});

function pair(F: number, make: (id: number, F: number) => LockstepScheduler): () => void {
  const peers = [make(0, F), make(1, F)];
  const cores = [new TestCore({ players: 2, inputBytes: 2 }), new TestCore({ players: 2, inputBytes: 2 })];
  const input = new Uint8Array(2);
  let now = 0;
  let k = 0;
  checks.push(() => {
    // Both peers must have run (nearly) every frame called for, or the figure means nothing.
    for (const c of cores) if (c.frame < k - 2) throw new Error(`a peer ran ${c.frame} of ${k} frames`);
  });
  return () => {
    now += F;
    k++;
    if ((k & 7) === 0) input[0] = k >>> 3;
    for (let i = 0; i < 2; i++) {
      const s = peers[i]!;
      s.setLocalInput(input, now);
      s.tick(now);
      // Deliver both outboxes at once (a zero-latency link), then run what is ready.
      for (const p of peers) {
        for (const e of p.outbox) peers[e.to]!.receive(p.id, e.channel, e.data, now);
        // Emptied with pop(): `length = 0` makes V8 drop the array's storage, so the next push
        // would allocate it again (≈150 B per frame).
        while (p.outbox.length > 0) p.outbox.pop();
      }
      for (let guard = 0; guard < 4; guard++) {
        const req = s.poll(now);
        if (!req) break;
        runFrame(cores[i]!, req.inputs, req.command);
      }
    }
  };
}

const BASE = 'TestCore frame (2 ports, set inputs + advance)';
const clientServer = (id: number, F: number): LockstepScheduler => {
  if (id === 1) return new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 2, frameMs: F });
  const s = new ClientServerServer({ id: 0, ports: 2, inputBytes: 2, frameMs: F });
  s.addClient(1, 1);
  return s;
};
const meshPeer = (id: number, F: number): LockstepScheduler =>
  new MeshPeer({
    id,
    members: [
      { id: 0, port: 0 },
      { id: 1, port: 1 },
    ],
    ports: 2,
    inputBytes: 2,
    frameMs: F,
    history: { initialOneWayMs: 0 },
  });
const frameAdvance = (id: number, F: number): LockstepScheduler =>
  new FrameAdvancePeer({
    id,
    port: id,
    peers: [1 - id],
    ports: 2,
    inputBytes: 2,
    frameMs: F,
    seed: id,
    initialOneWayMs: { [1 - id]: 0 },
  });

const goal = 'goal: 0 B/frame';
for (const [clock, F] of [
  ['', 1000 / 60],
  [', whole-ms clock', 16],
] as const) {
  const note = clock ? goal : `${goal}; fractional-ms times are boxed (see the file comment)`;
  suite.measure(`client-server frame (server + client${clock})`, pair(F, clientServer), {
    batch: 2,
    baseline: BASE,
    note,
  });
  suite.measure(`mesh frame (2 peers${clock})`, pair(F, meshPeer), { batch: 2, baseline: BASE, note });
  suite.measure(`frame-advance frame (2 peers${clock})`, pair(F, frameAdvance), { batch: 2, baseline: BASE, note });
}

for (const check of checks) check();
suite.finish();
