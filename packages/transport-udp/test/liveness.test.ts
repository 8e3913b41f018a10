import { fc, test } from '@fast-check/vitest';
import type { ChannelSpec } from '@netplay/transport';
import { describe, expect } from 'vitest';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [{ name: 'rel', kind: 'reliable' }];
const config = { timeouts: { interruptMs: 200, disconnectMs: 1000, connectMs: 1000 } };

// Outage lengths well inside each regime (the silence seen is the outage plus up to a keepalive
// interval and a latency on either side).
const outage = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: 260, max: 800 }),
  fc.integer({ min: 1100, max: 2500 }),
);

describe('UDP liveness on the simulated network', () => {
  test.prop([outage, fc.integer({ min: 1, max: 2 ** 31 })], { numRuns: 30 })(
    'an outage shorter than interruptMs is invisible; longer gives interrupted + resumed; past disconnectMs, timeout',
    (ms, seed) => {
      const sim = new SimUdp(channels, { seed, link: { latencyMs: 10, jitterMs: 2 }, config });
      const { client, server } = sim.pair('a', config);
      sim.net.advance(500);
      const events: string[] = [];
      for (const [side, c] of [
        ['a', client],
        ['b', server],
      ] as const) {
        c.on('interrupted', () => events.push(`${side}:interrupted`));
        c.on('resumed', () => events.push(`${side}:resumed`));
        c.on('close', (e) => events.push(`${side}:${e.code}`));
      }
      sim.net.cutBoth('a', 'server');
      sim.net.advance(ms);
      sim.net.heal();
      sim.net.advance(2000);
      const expected =
        ms < 100
          ? []
          : ms < 900
            ? ['a:interrupted', 'a:resumed', 'b:interrupted', 'b:resumed']
            : ['a:interrupted', 'a:timeout', 'b:interrupted', 'b:timeout'];
      expect(events.sort()).toEqual(expected);
    },
  );
});
