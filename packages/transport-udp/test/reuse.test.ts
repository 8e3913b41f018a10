import { fc, test } from '@fast-check/vitest';
import { type ChannelSpec, Prng } from '@netplay/transport';
import { describe, expect } from 'vitest';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

/**
 * The sender pools its queue entries and packet records and encodes into one buffer; these
 * properties stream messages over time (so entries are recycled while others are still in flight
 * or being resent) from a single caller buffer that is overwritten after every send.
 */
describe('pooled send queue under loss, duplication and reordering', () => {
  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 31 }),
      fc.double({ min: 0, max: 0.2, noNaN: true }),
      fc.array(
        fc.tuple(
          fc.constantFrom('input', 'bulk', 'state'),
          fc.oneof(fc.integer({ min: 0, max: 80 }), fc.integer({ min: 0, max: 3000 })),
          fc.integer({ min: 0, max: 20 }),
        ),
        { minLength: 1, maxLength: 120 },
      ),
    ],
    { numRuns: 30 },
  )('every reliable message arrives whole and in order; the queue drains to zero', (seed, loss, plan) => {
    const sim = new SimUdp(channels, {
      seed,
      link: { latencyMs: 4, jitterMs: 6, loss, duplicate: 0.05, reorder: 0.1, reorderDelayMs: 10 },
    });
    const { client, server } = sim.pair();
    const got: Record<string, Uint8Array[]> = { input: [], bulk: [], state: [] };
    server.on('message', (m) => got[m.channel]!.push(m.data));
    const want: Record<string, Uint8Array[]> = { input: [], bulk: [], state: [] };
    const prng = new Prng(seed);
    const buffer = new Uint8Array(3000);
    for (const [channel, size, waitMs] of plan) {
      const n = channel === 'state' ? Math.min(size, client.limits.maxUnreliableBytes) : size;
      const bytes = buffer.subarray(0, n);
      prng.fill(bytes);
      want[channel]!.push(bytes.slice());
      client.send(channel, bytes);
      prng.fill(buffer); // the caller reuses its buffer at once
      sim.net.advance(waitMs);
    }
    const total = want.input!.length + want.bulk!.length;
    const done = sim.net.runUntil(() => got.input!.length + got.bulk!.length >= total, 120_000);
    expect(done).toBe(true);
    expect(got.input).toEqual(want.input);
    expect(got.bulk).toEqual(want.bulk);
    // Unreliable messages that arrive are exact copies of messages sent, in sending order.
    let next = 0;
    for (const m of got.state!) {
      while (next < want.state!.length && !equal(want.state![next]!, m)) next++;
      expect(next).toBeLessThan(want.state!.length);
      next++;
    }
    sim.net.runUntil(() => client.stats.sendQueueLength === 0, 60_000);
    expect(client.stats.sendQueueLength).toBe(0);
    expect(client.stats.sendQueueBytes).toBe(0);
  });
});

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
