import { fc, test } from '@fast-check/vitest';
import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import type { NetplayClient, SessionError } from '../src/index.js';
import { clientFinals, compareFinals, type Finals, FRAME_MS, hostFinals, inputSource, setup } from './harness.js';

type Env = ReturnType<typeof setup>;

/** Ticks the host and the clients still playing for `ms` of simulated time, recording finals. */
function run(env: Env, clients: NetplayClient[], ms: number, finals: Finals[], seed: number): void {
  const hi = inputSource(seed);
  const ci = clients.map((_, i) => inputSource(seed + 1 + i));
  for (let t = 0; t < ms; t += FRAME_MS) {
    env.host.tick(hi());
    clients.forEach((c, k) => {
      if (c.state === 'playing') c.tick(ci[k]?.());
    });
    env.net.advance(FRAME_MS);
    for (const f of finals) f.record();
  }
}

const END_CODES = ['removed', 'host-lost', 'partitioned'];

describe('the finality rule at the session layer (rollback)', () => {
  test.prop([fc.integer({ min: 1, max: 2 ** 30 }), fc.constantFrom(2, 3), fc.integer({ min: 300, max: 1500 })], {
    numRuns: 4,
    examples: [[21, 2, 385]], // the transport timed out first here before the victim got a patient link
  })(
    'a client cut off from the host past the disconnect time ends with a finality reason; the others play on and every shared final agrees',
    (seed, players, cutAt) => {
      const core = () => new TestCore({ players, seed: 7 });
      const env = setup(seed, { core: core(), players }, { latencyMs: 20, jitterMs: 5, loss: 0 });
      // The victim's transport is patient (60 s), so what ends it is the finality rule (5 s), not
      // its link timing out first (which would also end it, as 'closed', but prove nothing here).
      const clients = Array.from({ length: players - 1 }, (_, i) =>
        env.join(`p${i + 1}`, { core: core() }, i === players - 2 ? { disconnectMs: 60_000 } : undefined),
      );
      const ended: { frame: number; error: SessionError }[] = [];
      env.host.on('ended', (e) => ended.push(e));
      const finals = [hostFinals(env.host), ...clients.map(clientFinals)];
      env.net.runUntil(() => clients.every((c) => c.state === 'playing'), 10_000);
      expect(clients.map((c) => c.state)).toEqual(clients.map(() => 'playing'));
      run(env, clients, cutAt, finals, seed);
      const victim = clients[clients.length - 1]!;
      env.net.cutBoth(`p${players - 1}`, 'host');
      run(env, clients, 9000, finals, seed + 7);
      // The victim ended, with a reason of the finality rule, and did not play on alone.
      const victimError = env.closes.find((e) => END_CODES.includes(e.code));
      expect(victim.state).toBe('closed');
      expect(victimError, `closes: ${env.closes.map((e) => e.code)}`).toBeDefined();
      expect(victimError?.message).toMatch(/ended for this peer at frame \d+/);
      // The host kept quorum (alone with 2 players, with the other client with 3) and plays on.
      expect(ended).toEqual([]);
      const others = clients.slice(0, -1);
      for (const c of others) expect(c.state).toBe('playing');
      // Every frame final on two peers agrees, the victim's included.
      const [h, ...rest] = finals as [Finals, ...Finals[]];
      for (const f of rest) expect(compareFinals(h, f).differing).toBe(0);
      expect(compareFinals(h, finals[finals.length - 1]!).compared).toBeGreaterThan(0);
    },
  );

  it('two of three players leaving cleanly at the same moment do not end the host: a voluntary leave needs no quorum', () => {
    const players = 3;
    const core = () => new TestCore({ players, seed: 7 });
    const env = setup(5, { core: core(), players }, { latencyMs: 20, jitterMs: 5, loss: 0 });
    const clients = [env.join('p1', { core: core() }), env.join('p2', { core: core() })];
    const ended: string[] = [];
    env.host.on('ended', ({ error }) => ended.push(error.code));
    const left: string[] = [];
    env.host.on('peer-left', ({ nick }) => left.push(nick));
    env.net.runUntil(() => clients.every((c) => c.state === 'playing'), 10_000);
    const finals = [hostFinals(env.host)];
    run(env, clients, 1000, finals, 11);
    for (const c of clients) c.close();
    const frameAtLeave = env.host.frame;
    run(env, [], 8000, finals, 12);
    expect(left.sort()).toEqual(['p1', 'p2']);
    expect(ended).toEqual([]);
    expect(env.host.frame).toBeGreaterThan(frameAtLeave + 300);
    expect(env.host.rollback?.endReason).toBeUndefined();
  });
});
