import { describe, expect, it } from 'vitest';
import { meshSession, pairwiseDiffering, play } from './mesh-harness.js';

/*
 * What the web page's handover e2e saw (apps/web e2e/handover.test.ts): after the host left, the
 * elected host played to its last frame and left too; the one player left then took over. Two
 * `host-changed` events on that player, in sequence, never two hosts at once.
 */
describe('host hand-over, then the new host leaves too', () => {
  it('3 players: the host closes, one client is elected; it closes later: the other (alone) takes over, and every final agrees', () => {
    const env = meshSession(5, 3, { latencyMs: 12, jitterMs: 3, loss: 0 });
    const [a, b] = env.watched;
    if (a === undefined || b === undefined) throw new Error('two clients');
    let alive = true;
    play(env, 2000, 3, () => alive);
    alive = false;
    env.host.close();
    play(env, 3000, 4, () => alive);
    // One new host, named alike by both, before anything else happens.
    const elected = a.hosts[0];
    expect([a.hosts, b.hosts]).toEqual([[elected], [elected]]);
    const [host, other] = elected === a.name ? [a, b] : [b, a];
    expect(host.name).toBe(elected);
    const before = other.client.rollback?.confirmedFrame ?? 0;
    host.client.close('closed: the client left');
    play(env, 3000, 5, () => alive);
    // The elected host saw one hand-over (its own); the other saw it, then its own once it was gone.
    expect(host.hosts).toEqual([host.name]);
    expect(other.hosts).toEqual([host.name, other.name]);
    expect(other.client.state).toBe('playing');
    expect(other.client.rollback?.confirmedFrame ?? 0).toBeGreaterThan(before + 100);
    for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  });
});
