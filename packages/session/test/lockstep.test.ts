import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import type { NetplayClient, NetplayHost } from '../src/index.js';
import { FRAME_MS, inputSource, setup } from './harness.js';

type Env = ReturnType<typeof setup>;

/** Checksums of the state after each frame ran, from the `frame` events. */
function track(peer: NetplayHost | NetplayClient): Map<number, bigint> {
  const sums = new Map<number, bigint>();
  const record = ({ frame }: { frame: number }) => {
    sums.set(frame, peer.core.checksum());
  };
  if ('accept' in peer) peer.on('frame', record);
  else peer.on('frame', record);
  return sums;
}

function run(env: Env, clients: NetplayClient[], ms: number, seed: number): void {
  const hi = inputSource(seed);
  const ci = clients.map((_, i) => inputSource(seed + 1 + i));
  for (let t = 0; t < ms; t += FRAME_MS) {
    env.host.tick(hi());
    clients.forEach((c, i) => {
      c.tick(ci[i]?.());
    });
    env.net.advance(FRAME_MS);
  }
}

function agree(a: Map<number, bigint>, b: Map<number, bigint>): { compared: number; differing: number } {
  let compared = 0;
  let differing = 0;
  for (const [f, h] of b) {
    const o = a.get(f);
    if (o === undefined) continue;
    compared++;
    if (o !== h) differing++;
  }
  return { compared, differing };
}

describe('lockstep-cs', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 0, max: 50 }),
      fc.double({ min: 0, max: 0.05, noNaN: true }),
    ],
    { numRuns: 5 },
  )('host + 2 clients (one joining late) agree on every frame', (seed, latencyMs, loss) => {
    const env = setup(
      seed,
      { mode: 'lockstep-cs', players: 3, core: new TestCore({ players: 3, seed: 7 }) },
      {
        latencyMs,
        jitterMs: 5,
        loss,
      },
    );
    const mk = () => new TestCore({ players: 3, seed: 7 });
    const hostSums = track(env.host);
    const a = env.join('a', { core: mk() });
    const aSums = track(a);
    env.net.runUntil(() => a.state !== 'handshaking', 10_000);
    expect(a.state).toBe('playing');
    expect(a.info).toMatchObject({ mode: 'lockstep-cs', slot: 1, players: 3 });
    run(env, [a], 2000, seed);
    const b = env.join('b', { core: mk() });
    const bSums = track(b);
    run(env, [a, b], 4000, seed + 7);
    expect(b.state).toBe('playing');
    expect(b.info?.slot).toBe(2);
    expect(b.info?.frame).toBeGreaterThan(60);
    expect(env.host.frame).toBeGreaterThan(300);
    const ra = agree(hostSums, aSums);
    const rb = agree(hostSums, bSums);
    expect(ra.compared).toBeGreaterThan(250);
    expect(rb.compared).toBeGreaterThan(150);
    expect(ra.differing + rb.differing).toBe(0);
    // b started late: its first frame is past the join
    expect(Math.min(...bSums.keys())).toBeGreaterThan(60);
  });

  it('admits spectators, refuses players past the limit, and keeps running when a client leaves', () => {
    const env = setup(30, { mode: 'lockstep-cs', players: 2 });
    const hostSums = track(env.host);
    const a = env.join('a');
    env.net.runUntil(() => a.state !== 'handshaking', 10_000);
    const spec = env.join('s', { spectate: true });
    const specSums = track(spec);
    const extra = env.join('x');
    run(env, [a, spec, extra], 1000, 3);
    expect(spec.state).toBe('spectating');
    expect(spec.info?.slot).toBeUndefined();
    const rs = agree(hostSums, specSums);
    expect(rs.compared).toBeGreaterThan(40);
    expect(rs.differing).toBe(0);
    expect(extra.error?.code).toBe('server-full');
    expect(a.state).toBe('playing');
    const before = env.host.frame;
    a.close();
    run(env, [], 1000, 4);
    expect(env.host.frame).toBeGreaterThan(before + 40);
    expect(hostSums.size).toBeGreaterThan(80);
    // the slot is free again
    const c = env.join('c');
    run(env, [c], 1000, 5);
    expect(c.state).toBe('playing');
    expect(c.info?.slot).toBe(1);
  });
});
