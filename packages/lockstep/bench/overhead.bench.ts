/**
 * Scheduler overhead per frame, next to the core's own frame: two peers of each mode exchange
 * messages in process (no transport), one frame each per call, with an input change every 8th
 * frame. ops/s = frames (of both peers) per second; B/op = heap bytes allocated per frame.
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
const F = 1000 / 60;

const baseCore = new TestCore({ players: 2, inputBytes: 2 });
const zeros = new Uint8Array(4);
suite.measure('TestCore frame (2 ports, set inputs + advance)', () => runFrame(baseCore, zeros, 0), {
  note: 'baseline: the core alone',
});

function pair(make: (id: number) => LockstepScheduler): () => void {
  const peers = [make(0), make(1)];
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

suite.measure(
  'client-server frame (server + client)',
  pair((id) =>
    id === 0
      ? (() => {
          const s = new ClientServerServer({ id: 0, ports: 2, inputBytes: 2, frameMs: F });
          s.addClient(1, 1);
          return s;
        })()
      : new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 2, frameMs: F }),
  ),
  { batch: 2, baseline: 'TestCore frame (2 ports, set inputs + advance)' },
);
suite.measure(
  'mesh frame (2 peers)',
  pair(
    (id) =>
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
      }),
  ),
  { batch: 2, baseline: 'TestCore frame (2 ports, set inputs + advance)' },
);
suite.measure(
  'frame-advance frame (2 peers)',
  pair(
    (id) =>
      new FrameAdvancePeer({
        id,
        port: id,
        peers: [1 - id],
        ports: 2,
        inputBytes: 2,
        frameMs: F,
        seed: id,
        initialOneWayMs: { [1 - id]: 0 },
      }),
  ),
  { batch: 2, baseline: 'TestCore frame (2 ports, set inputs + advance)' },
);

for (const check of checks) check();
suite.finish();
