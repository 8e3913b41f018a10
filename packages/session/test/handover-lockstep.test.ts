import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect } from 'vitest';
import type { NetplayClient, NetplayHost } from '../src/index.js';
import { FRAME_MS, inputSource, setup } from './harness.js';

/**
 * The lockstep modes have no host hand-over (README, "Host hand-over"): the host is the server
 * (lockstep-cs) or the relay every message goes through and the one whose run frames are final
 * (lockstep-p2p, frame-advance). When it is killed or leaves, every client ends with `host-lost`,
 * and every frame final on two peers (the host's included) has the same state.
 */

interface Track {
  readonly sums: Map<number, bigint>;
  final: number;
}

function track(peer: NetplayHost | NetplayClient): Track {
  const t: Track = { sums: new Map(), final: -1 };
  (peer as NetplayClient).on('frame', ({ frame }) => t.sums.set(frame, peer.core.checksum()));
  (peer as NetplayClient).on('final', ({ frame }) => {
    t.final = frame;
  });
  return t;
}

function disagreements(a: Track, b: Track): { compared: number; differing: number[] } {
  const differing: number[] = [];
  let compared = 0;
  for (let f = 0; f <= Math.min(a.final, b.final); f++) {
    const x = a.sums.get(f);
    const y = b.sums.get(f);
    if (x === undefined || y === undefined) continue;
    compared++;
    if (x !== y) differing.push(f);
  }
  return { compared, differing };
}

describe.each(['lockstep-cs', 'lockstep-p2p', 'frame-advance'] as const)('%s: the host goes', (mode) => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 3, max: 4 }),
      fc.integer({ min: 0, max: 30 }),
      fc.integer({ min: 500, max: 3000 }),
      fc.constantFrom('cut', 'close'),
    ],
    { numRuns: 3 },
  )('every client ends host-lost; every frame final on two peers agrees', (seed, players, latencyMs, goAt, fate) => {
    const env = setup(
      seed,
      { mode, players, core: new TestCore({ players, seed: 7 }) },
      { latencyMs, jitterMs: 3, loss: 0.01 },
    );
    const host = track(env.host);
    const clients = Array.from({ length: players - 1 }, (_, i) =>
      env.join(`p${i + 1}`, { core: new TestCore({ players, seed: 7 }), randomU32: () => 0x40 + i }),
    );
    const tracks = clients.map(track);
    env.net.runUntil(() => clients.every((c) => c.state !== 'handshaking'), 20_000);
    expect(clients.map((c) => c.state)).toEqual(clients.map(() => 'playing'));
    const hi = inputSource(seed);
    const ci = clients.map((_, i) => inputSource(seed + 1 + i));
    let alive = true;
    for (let t = 0; t < goAt + 15_000; t += FRAME_MS) {
      if (alive && t >= goAt) {
        alive = false;
        if (fate === 'close') env.host.close();
        else for (let i = 1; i < players; i++) env.net.cutBoth('host', `p${i}`);
      }
      if (alive) env.host.tick(hi());
      clients.forEach((c, i) => {
        if (c.state !== 'closed') c.tick(ci[i]?.());
      });
      env.net.advance(FRAME_MS);
    }
    expect(clients.map((c) => c.error?.code)).toEqual(clients.map(() => 'host-lost'));
    for (const [i, t] of tracks.entries()) {
      expect(t.final, `p${i + 1} has finals`).toBeGreaterThan(0);
      const vsHost = disagreements(host, t);
      expect(vsHost.differing, `host vs p${i + 1}`).toEqual([]);
      expect(vsHost.compared).toBeGreaterThan(0);
      for (const u of tracks.slice(i + 1)) expect(disagreements(t, u).differing).toEqual([]);
    }
  });
});
