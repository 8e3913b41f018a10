import { describe, expect, it } from 'vitest';
import { asSessionError } from './harness.js';
import { meshSession, pairwiseDiffering, play, type Watched } from './mesh-harness.js';

/** Every `reset` event of each client, by frame. */
function resetsOf(watched: readonly Watched[]): Map<Watched, number[]> {
  const out = new Map<Watched, number[]>();
  for (const w of watched) {
    const list: number[] = [];
    out.set(w, list);
    w.client.on('reset', ({ frame }) => list.push(frame));
  }
  return out;
}

describe('reset after a host hand-over', () => {
  it('the elected host resets every survivor at one frame (their cores restart from power-on there); finals agree; nobody else may reset', () => {
    const env = meshSession(51, 4, { latencyMs: 10, jitterMs: 2, loss: 0.01 });
    const resets = resetsOf(env.watched);
    // Before a hand-over only the host resets.
    expect(() => env.watched[0]?.client.reset()).toThrow(/only the host resets/);
    let alive = true;
    play(env, 2000, 1, () => alive);
    alive = false;
    env.host.close();
    play(env, 2000, 2, () => alive);
    const elected = env.watched.find((w) => w.hosts.at(-1) === w.name);
    if (elected === undefined) throw new Error('no host elected');
    const others = env.watched.filter((w) => w !== elected);
    for (const o of others) {
      expect(o.hosts.at(-1)).toBe(elected.name);
      expect(asSessionError(catching(() => o.client.reset())).code).toBe('bad-argument');
    }
    elected.client.reset();
    play(env, 3000, 3, () => alive);
    const frames = env.watched.map((w) => resets.get(w) ?? []);
    expect(frames[0]?.length).toBe(1);
    expect(new Set(frames.map((f) => f.join(','))).size, JSON.stringify(frames)).toBe(1);
    const at = frames[0]?.[0] ?? 0;
    for (const w of env.watched) {
      expect(w.client.state).toBe('playing');
      // The game clock restarted at the reset frame: the core counts the frames run since then.
      const now = w.client.rollback?.currentFrame ?? 0;
      expect(now - at).toBeGreaterThan(100);
      expect(w.core.frame, w.name).toBeLessThanOrEqual(now - at + 1);
    }
    for (const p of pairwiseDiffering(env)) expect(p.differing, `${p.a} vs ${p.b}`).toBe(0);
  });
});

function catching(f: () => void): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('no error thrown');
}
