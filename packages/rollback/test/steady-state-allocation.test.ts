import { measureAllocation } from '@netplay/bench-kit';
import { describe, expect, it } from 'vitest';
import { sessionLoop } from './engine-loop.js';

/**
 * Heap allocation of P2P sessions in a steady state, per peer-frame: the rollback bench's engine
 * loop (`engine-loop.ts`: every input arrives 7 frames late, so every frame rolls back 7 frames;
 * a no-op core whose checksums are made once, so the core allocates nothing; messages copied into
 * preallocated slots, so the harness allocates nothing).
 *
 * The goal is 0 B per frame, checksums on or off. Measured with the bench kit's GC-profiler count
 * (collected garbage included), in {@link WINDOWS} windows of {@link EXCHANGES} checksum
 * exchanges each after a long warm-up; the least window is bounded. The tolerance,
 * {@link TOLERANCE} B per peer-frame, is for what the runtime adds now and then (a
 * deoptimisation and re-tiering in a window), not for the session: it is less than one 16-byte
 * heap object every 160 peer-frames, while a `bigint` read back from a checksum ring (what the
 * exchange allocated before, ≈ 5 B per peer-frame) is one every exchange frame save.
 */
const INTERVAL = 60;
const EXCHANGES = 40;
const WINDOWS = 4;
const TOLERANCE = 0.1;

/** Least bytes per call of `step` over the windows, after `warmup` calls. */
function leastBytesPerFrame(step: () => void, calls: number, warmup: number): number {
  for (let i = 0; i < warmup; i++) step();
  let least = Number.POSITIVE_INFINITY;
  for (let w = 0; w < WINDOWS; w++) least = Math.min(least, measureAllocation(step, calls, 0).bytesPerCall);
  return least;
}

describe('steady-state allocation of P2P sessions', () => {
  it.each([2, 4])('%i players, checksums every 60 frames: 0 B per peer-frame', (players) => {
    const loop = sessionLoop(players, INTERVAL);
    const calls = INTERVAL * players * EXCHANGES;
    const perFrame = leastBytesPerFrame(loop.step, calls, 20 * calls);
    console.log(`${players} players, checksums on: ${perFrame.toFixed(3)} B per peer-frame`);
    const frames = loop.first.stats.currentFrame;
    expect(frames).toBeGreaterThan(INTERVAL * EXCHANGES * (WINDOWS + 20) - 20);
    expect(loop.sessions.every((s) => s.stats.desyncs === 0)).toBe(true);
    expect(perFrame).toBeLessThanOrEqual(TOLERANCE);
    // The exchange ran in this loop: states made to differ are caught within two exchanges.
    loop.cores[players - 1]!.sumXor = 1n;
    for (let i = 0; i < 3 * INTERVAL * players; i++) loop.step();
    expect(loop.sessions.some((s) => s.stats.desyncs > 0)).toBe(true);
  });

  it('2 players, checksums off: 0 B per peer-frame', () => {
    const loop = sessionLoop(2, 0);
    const calls = INTERVAL * 2 * EXCHANGES;
    const perFrame = leastBytesPerFrame(loop.step, calls, 20 * calls);
    console.log(`2 players, checksums off: ${perFrame.toFixed(3)} B per peer-frame`);
    expect(perFrame).toBeLessThanOrEqual(TOLERANCE);
  });
});
