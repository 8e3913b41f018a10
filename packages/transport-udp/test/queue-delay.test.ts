import { Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { QUEUE_FILTER_SAMPLES, QueueDelayFilter } from '../src/queue-delay.js';

// The delay signal of congestion control: RTT samples of a 0.1 ms path (loopback, or the
// simulated link of test/jitter-collapse.test.ts) with up to 15 ms of random delay each way.
describe('QueueDelayFilter', () => {
  it('random per-packet delay alone is not read as a queue (seeded; most single samples are above the threshold)', () => {
    const prng = new Prng(16);
    const f = new QueueDelayFilter();
    let flagged = 0;
    let aboveAlone = 0;
    const n = 10_000;
    for (let i = 0; i < n; i++) {
      const rtt = 0.1 + 15 * prng.nextFloat() + 15 * prng.nextFloat();
      f.sample(rtt);
      if (rtt > 2 * f.base + 10) aboveAlone++; // the rule before: one sample above 2 × base + 10 ms
      if (f.queueBuilding(10)) flagged++;
    }
    // The single-sample rule would cut on most samples; the windowed minimum on about 2 % (all 16
    // samples above 10.2 ms: 0.78^16), and a cut is taken at most once per RTT.
    expect(aboveAlone).toBeGreaterThan(n * 0.6);
    expect(flagged).toBeLessThan(n * 0.03);
  });

  it('a standing queue lifts every sample and is seen within one window of samples', () => {
    const prng = new Prng(17);
    const f = new QueueDelayFilter();
    for (let i = 0; i < 100; i++) f.sample(0.1 + 2 * prng.nextFloat());
    expect(f.queueBuilding(10)).toBe(false);
    let seenAfter = -1;
    for (let i = 0; i < 100 && seenAfter < 0; i++) {
      f.sample(25 + 15 * prng.nextFloat()); // 25 ms of queue on top of the path
      if (f.queueBuilding(10)) seenAfter = i + 1;
    }
    expect(seenAfter).toBe(QUEUE_FILTER_SAMPLES);
    expect(f.recentMin()).toBeGreaterThan(25);
  });

  it('says nothing before a full window of samples', () => {
    const f = new QueueDelayFilter();
    f.sample(1);
    for (let i = 0; i < QUEUE_FILTER_SAMPLES - 2; i++) f.sample(100);
    expect(f.queueBuilding(10)).toBe(false);
    f.sample(100);
    expect(f.queueBuilding(10)).toBe(false); // the 1 ms sample is still in the window
    f.sample(100);
    expect(f.queueBuilding(10)).toBe(true);
  });
});
