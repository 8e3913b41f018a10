import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import {
  ClientServerClient,
  ClientServerServer,
  type Envelope,
  FrameAdvancePeer,
  type FrameRequest,
  type LockstepScheduler,
  MeshPeer,
  runFrame,
} from '../src/index.js';

/**
 * The steady state of each mode, driven in process as the overhead bench drives it (two peers, a
 * zero-latency link, an input change every 8th frame). Heap figures are the bench's business;
 * here we check what makes them zero: the same request object every frame, a bounded set of
 * envelopes and message buffers cycling through the outbox, bounded histories. The peers' logs
 * must still agree frame by frame (a buffer reused too early would break that).
 */
const FRAMES = 10_000;
const F = 1000 / 60;

interface Run {
  readonly peers: LockstepScheduler[];
  /** Distinct request objects each peer's poll returned. */
  readonly requests: Set<FrameRequest>[];
  /** Distinct envelopes and data buffers seen in the outboxes after the warm-up. */
  readonly envelopes: Set<Envelope>;
  readonly buffers: Set<Uint8Array>;
  /** Each peer's inputs per frame (copies). */
  readonly logs: Uint8Array[][];
  readonly cores: TestCore[];
}

function drive(make: (id: number) => LockstepScheduler, frames = FRAMES): Run {
  const peers = [make(0), make(1)];
  const cores = [new TestCore({ players: 2, inputBytes: 2 }), new TestCore({ players: 2, inputBytes: 2 })];
  const run: Run = {
    peers,
    requests: [new Set(), new Set()],
    envelopes: new Set(),
    buffers: new Set(),
    logs: [[], []],
    cores,
  };
  const input = new Uint8Array(2);
  let now = 0;
  for (let k = 1; k <= frames; k++) {
    now += F;
    if ((k & 7) === 0) input[0] = k >>> 3;
    for (let i = 0; i < 2; i++) {
      const s = peers[i]!;
      s.setLocalInput(input, now);
      s.tick(now);
      for (const p of peers) {
        for (const e of p.outbox) {
          if (k > 100) {
            run.envelopes.add(e);
            run.buffers.add(e.data);
          }
          peers[e.to]!.receive(p.id, e.channel, e.data, now);
        }
        while (p.outbox.length > 0) p.outbox.pop();
      }
      for (let guard = 0; guard < 4; guard++) {
        const req = s.poll(now);
        if (!req) break;
        run.requests[i]!.add(req);
        run.logs[i]!.push(req.inputs.slice());
        runFrame(cores[i]!, req.inputs, req.command);
      }
    }
  }
  return run;
}

function expectSteady(run: Run, maxBuffers: number): void {
  for (let i = 0; i < 2; i++) {
    expect(run.cores[i]!.frame, `peer ${i} ran (nearly) every frame`).toBeGreaterThanOrEqual(FRAMES - 3);
    expect(run.requests[i]!.size, `peer ${i} returns one reused request object`).toBe(1);
  }
  // Thousands of messages went through the outboxes, in a handful of reused envelopes and buffers.
  expect(run.envelopes.size).toBeLessThanOrEqual(maxBuffers);
  expect(run.buffers.size).toBeLessThanOrEqual(maxBuffers);
  // Both peers ran the same inputs on every frame both ran.
  const n = Math.min(run.logs[0]!.length, run.logs[1]!.length);
  for (let f = 0; f < n; f++) expect(run.logs[1]![f], `frame ${f}`).toEqual(run.logs[0]![f]);
  expect(run.cores[1]!.checksum()).toBe(run.cores[0]!.checksum());
}

describe('steady state: reused objects, bounded buffers', () => {
  it('client-server', () => {
    const run = drive((id) => {
      if (id === 1) return new ClientServerClient({ id: 1, server: 0, ports: 2, inputBytes: 2, frameMs: F });
      const s = new ClientServerServer({ id: 0, ports: 2, inputBytes: 2, frameMs: F });
      s.addClient(1, 1);
      return s;
    });
    expectSteady(run, 8);
    // The client's own input is on port 1, the server's on port 0: both changed during the run.
    const last = run.logs[0]![run.logs[0]!.length - 1]!;
    expect(last[0]).not.toBe(0);
    expect(last[2]).not.toBe(0);
  });

  it('frame-advance', () => {
    const run = drive(
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
    );
    expectSteady(run, 16);
  });

  it('mesh, with its own input history bounded (what a late joiner can still need)', () => {
    const syncIntervalFrames = 100;
    const run = drive(
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
          syncIntervalFrames,
          history: { initialOneWayMs: 0 },
        }),
    );
    expectSteady(run, 16);
    for (const p of run.peers) {
      const m = p as MeshPeer;
      // One packet per frame for 10 000 frames, but only the window late join can use is kept:
      // items timed from 2 sync intervals + 120 frames before the next frame on (one before that
      // too), up to the next frame + the latency (here 1 frame: packets are timed ahead).
      expect(m.historyLength).toBeGreaterThanOrEqual(2 * syncIntervalFrames + 120);
      expect(m.historyLength).toBeLessThanOrEqual(2 * syncIntervalFrames + 120 + m.latencyFrames() + 2);
    }
  });
});
