import { describe, expect, it } from 'vitest';
import { meshSession, pairwiseDiffering, play } from './mesh-harness.js';

/*
 * A pair of linked players whose own direct path never came up is relayed by the host; when the
 * host goes, that pair loses its only path (README, the table after the hand-over).
 */
describe('a relayed pair at a host hand-over', () => {
  it('4 players, p1 and p2 cannot reach each other: when the host leaves, the quorum rule keeps one of them, the others follow one new host and every final agrees', () => {
    const env = meshSession(
      32,
      4,
      { latencyMs: 10, jitterMs: 2, loss: 0 },
      { beforeJoin: (net) => net.cutBoth('p1', 'p2') },
    );
    const [p1, p2, p3] = env.watched;
    if (p1 === undefined || p2 === undefined || p3 === undefined) throw new Error('three clients');
    let alive = true;
    play(env, 3000, 5, () => alive);
    expect(env.relayed.bytes).toBeGreaterThan(0);
    alive = false;
    const atLoss = env.host.frame;
    env.host.close();
    play(env, 15_000, 6, () => alive);
    // Exactly one of the pair is left out (removed by the new host); the other plays on with p3.
    const pair = [p1, p2].filter((w) => w.client.state === 'playing');
    expect(pair.length, [p1, p2].map((w) => `${w.name}: ${w.ended?.message ?? 'playing'}`).join('; ')).toBe(1);
    expect([p1, p2].find((w) => w.client.state !== 'playing')?.ended?.code).toBe('removed');
    const playing = [...pair, p3];
    const hosts = new Set(playing.map((w) => w.hosts.at(-1)));
    expect(hosts.size).toBe(1);
    for (const w of playing) expect(w.client.rollback?.confirmedFrame ?? 0, w.name).toBeGreaterThan(atLoss + 300);
    for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  });
});
