import { describe, expect, it } from 'vitest';
import type { NetplayClient } from '../src/index.js';
import { clientFinals, compareFinals, FRAME_MS, hostFinals, inputSource, setup } from './harness.js';

// A rollback player that is slow to start (its first tick comes late after its SYNC: a browser
// page still busy, a loaded machine) or stops ticking for a while after its first frames. The host
// starts its scheduler when it sends SYNC; the scheduler runs only once every player has been
// heard, and a player counts as alive by the progress of its inputs (the rollback README,
// "Finality and partitions", rule 5), so a late start is not blamed on the player unless it
// delivers nothing for the whole disconnect time (5 s by default). Virtual time (the seeded
// SimulatedNetwork's ManualClock): no machine speed is assumed.

const DISCONNECT_MS = 5000;

interface Run {
  readonly closed: string | undefined;
  readonly hostFrame: number;
  readonly clientFrame: number;
  readonly compared: number;
  readonly differing: number;
}

/**
 * Host and one client tick every frame for `ms` of virtual time; the client's ticks start
 * `startMs` after it joined and stop for `pauseMs` after its `pauseAfter`-th tick.
 */
function play(seed: number, startMs: number, pauseAfter = -1, pauseMs = 0, ms = 12_000): Run {
  const { net, host, join, closes } = setup(seed, { mode: 'rollback' }, { latencyMs: 20, jitterMs: 5, loss: 0.01 });
  const client: NetplayClient = join('late');
  let joinedAt = -1;
  client.on('joined', () => {
    joinedAt = net.clock.now();
  });
  const hostIn = inputSource(seed + 1);
  const clientIn = inputSource(seed + 2);
  const hf = hostFinals(host);
  const cf = clientFinals(client);
  let ticks = 0;
  let pausedUntil = -1;
  for (let t = 0; t < ms && closes.length === 0; t += FRAME_MS) {
    net.clock.advance(FRAME_MS);
    const now = net.clock.now();
    host.tick(hostIn());
    hf.record();
    if (joinedAt >= 0 && now >= joinedAt + startMs && now >= pausedUntil) {
      client.tick(clientIn());
      cf.record();
      if (++ticks === pauseAfter) pausedUntil = now + pauseMs;
    }
  }
  const c = compareFinals(hf, cf);
  return {
    closed: closes[0]?.code,
    hostFrame: host.frame ?? -1,
    clientFrame: client.frame ?? -1,
    compared: c.compared,
    differing: c.differing,
  };
}

describe('rollback: a player slow to start is not removed', () => {
  it.each([0, 1000, 3000, DISCONNECT_MS - 500])(
    'its first tick %i ms after it joined: both play on from frame 0 and their finals agree',
    (startMs) => {
      const r = play(11, startMs);
      expect(r.closed).toBeUndefined();
      // The host waited for it: neither ran ahead of the other by more than the prediction window.
      expect(Math.abs(r.hostFrame - r.clientFrame)).toBeLessThanOrEqual(8);
      // 12 s of virtual time less the late start, at 62.5 fps.
      expect(r.clientFrame).toBeGreaterThan(((12_000 - startMs - 1000) / FRAME_MS) | 0);
      expect(r.differing).toBe(0);
      expect(r.compared).toBeGreaterThan(300);
    },
  );

  it('a player stopped for less than the disconnect time after its first 5 frames plays on; longer, it is removed', () => {
    const short = play(12, 0, 5, DISCONNECT_MS - 500);
    expect(short.closed).toBeUndefined();
    expect(short.differing).toBe(0);
    expect(short.compared).toBeGreaterThan(300);

    // Delivering nothing for the whole disconnect time is what the rule removes (at an agreed
    // frame), whether the player is slow or gone: the host plays on.
    const long = play(12, 0, 5, DISCONNECT_MS + 1000);
    expect(long.closed).toBe('removed');
    expect(long.clientFrame).toBeLessThan(10);
    expect(long.differing).toBe(0);
  });

  it('a player that never ticks within the disconnect time of its SYNC is removed before frame 1 (the synchronizing bound)', () => {
    const r = play(13, DISCONNECT_MS + 500);
    expect(r.closed).toBe('removed');
    expect(r.clientFrame).toBe(0);
  });
});
