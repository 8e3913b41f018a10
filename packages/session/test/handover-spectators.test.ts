import { TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';
import type { SessionError } from '../src/index.js';
import { FRAME_MS } from './harness.js';
import { LINK_TIMEOUTS, type MeshEnv, meshSession, play } from './mesh-harness.js';

/** {@link play}, with a spectator ticking too. */
function playWatching(
  env: MeshEnv,
  spectator: { tick(): unknown; state: string },
  ms: number,
  seed: number,
  hostAlive: () => boolean,
): void {
  for (let t = 0; t < ms; t += FRAME_MS) {
    play(env, FRAME_MS, seed + t, hostAlive);
    if (spectator.state === 'spectating') spectator.tick();
  }
}

/*
 * Spectators watch through the old host only (its stream on its connection); the new host has no
 * listener to take them in, so they end `host-lost` while the linked players play on (README,
 * "Direct links and host hand-over", the table after the hand-over).
 */
describe('spectators of a host that goes, in a game with direct links', () => {
  for (const fate of ['close', 'cut'] as const) {
    it(`the host ${fate === 'close' ? 'leaves' : 'is cut off'}: the spectator ends host-lost, the players follow one new host`, () => {
      const env = meshSession(61, 4, { latencyMs: 10, jitterMs: 2, loss: 0 });
      const spectator = env.join(
        'watcher',
        { core: new TestCore({ players: 4, seed: 7 }), spectate: true },
        LINK_TIMEOUTS,
      );
      let ended: SessionError | undefined;
      let endedAt = -1;
      spectator.on('closed', ({ error }) => {
        ended = error;
        endedAt = env.net.clock.now();
      });
      let alive = true;
      playWatching(env, spectator, 2000, 1, () => alive);
      expect(spectator.state).toBe('spectating');
      expect(spectator.spectator?.currentFrame ?? 0).toBeGreaterThan(60);
      alive = false;
      const lostAt = env.net.clock.now();
      if (fate === 'close') env.host.close();
      else {
        env.net.cutBoth('host', 'watcher');
        for (const w of env.watched) env.net.cutBoth('host', w.name);
      }
      playWatching(env, spectator, 6000, 2, () => alive);
      expect(ended?.code).toBe('host-lost');
      expect(ended?.message).toMatch(/spectators do not follow a host hand-over/);
      // A host that closes tells it at once; a killed one is noticed by the transport's 2 s timeout.
      expect(endedAt - lostAt).toBeLessThan(fate === 'close' ? 200 : 2600);
      const hosts = new Set(env.watched.map((w) => w.hosts.at(-1)));
      expect(hosts.size).toBe(1);
      for (const w of env.watched) expect(w.client.state).toBe('playing');
    });
  }
});
