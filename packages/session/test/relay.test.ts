import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import type { NetplayClient } from '../src/index.js';
import { clientFinals, compareFinals, type Finals, FRAME_MS, hostFinals, inputSource, setup } from './harness.js';

type Env = ReturnType<typeof setup>;

/** Ticks everyone until the host reached `frames` (ticks are not frames: stalls happen), at most 3× that. */
function run(env: Env, clients: NetplayClient[], frames: number, finals: Finals[], seed: number): void {
  const hi = inputSource(seed);
  const ci = clients.map((_, i) => inputSource(seed + 1 + i));
  const target = env.host.frame + frames;
  for (let i = 0; i < 3 * frames && env.host.frame < target; i++) {
    env.host.tick(hi());
    clients.forEach((c, k) => {
      c.tick(ci[k]?.());
    });
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

function settle(env: Env, clients: NetplayClient[], finals: Finals[]): void {
  for (let i = 0; i < 60; i++) {
    env.host.rollback?.poll();
    for (const c of clients) c.rollback?.poll();
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

describe('rollback with more than 2 players (relayed by the host)', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.integer({ min: 3, max: 4 }),
      fc.integer({ min: 0, max: 50 }),
      fc.double({ min: 0, max: 0.05, noNaN: true }),
    ],
    { numRuns: 5 },
  )('every player agrees with the host on every final frame', (seed, players, latencyMs, loss) => {
    const core = () => new TestCore({ players, seed: 7 });
    const env = setup(seed, { players, core: core() }, { latencyMs, jitterMs: 5, loss });
    const waits: number[] = [];
    const clients: NetplayClient[] = [];
    for (let i = 1; i < players; i++) {
      const c = env.join(`p${i}`, { core: core() });
      c.on('waiting', ({ joined }) => waits.push(joined));
      clients.push(c);
      // well past the handshake timeout: admitted players wait for the others
      if (i < players - 1) env.net.advance(12_000);
    }
    env.net.runUntil(() => clients.every((c) => c.state !== 'handshaking'), 10_000);
    expect(clients.map((c) => c.state)).toEqual(clients.map(() => 'playing'));
    expect(clients.map((c) => c.info?.slot).sort()).toEqual(clients.map((_, i) => i + 1));
    expect(waits.length).toBeGreaterThan(0);
    const finals = [hostFinals(env.host), ...clients.map(clientFinals)];
    run(env, clients, 300, finals, seed);
    settle(env, clients, finals);
    expect(env.host.frame).toBeGreaterThanOrEqual(300);
    for (const f of finals.slice(1)) {
      const { compared, differing } = compareFinals(finals[0] as Finals, f);
      expect(compared).toBeGreaterThan(200);
      expect(differing).toBe(0);
    }
  });

  it('a player leaving mid-game: the others go on and still agree', () => {
    const core = () => new TestCore({ players: 3, seed: 7 });
    const env = setup(42, { players: 3, core: core() });
    const a = env.join('a', { core: core() });
    const b = env.join('b', { core: core() });
    env.net.runUntil(() => a.state !== 'handshaking' && b.state !== 'handshaking', 10_000);
    expect([a.state, b.state]).toEqual(['playing', 'playing']);
    const finals = [hostFinals(env.host), clientFinals(a)];
    run(env, [a, b], 150, finals, 1);
    const bSlot = b.info?.slot ?? -1;
    b.close();
    run(env, [a], 400, finals, 2);
    settle(env, [a], finals);
    expect(env.host.frame).toBeGreaterThan(450);
    expect(a.frame ?? 0).toBeGreaterThan(450);
    const left = env.host.rollback?.playerLeftAt(bSlot);
    expect(left).toBeDefined();
    expect(a.rollback?.playerLeftAt(bSlot)).toBe(left);
    const { compared, differing } = compareFinals(finals[0] as Finals, finals[1] as Finals);
    expect(compared).toBeGreaterThan(400);
    expect(differing).toBe(0);
  });
});
