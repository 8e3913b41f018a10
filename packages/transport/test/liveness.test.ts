import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { ChannelSpec } from '../src/contract.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

const channels: readonly ChannelSpec[] = [{ name: 'rel', kind: 'reliable' }];
const timeouts = { interruptMs: 200, disconnectMs: 1000, connectMs: 1000 };

// Outage lengths well inside each regime: the silence a peer sees is the outage plus up to a ping
// interval and a latency on either side, so the borders are avoided.
const outage = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: 260, max: 800 }),
  fc.integer({ min: 1100, max: 2500 }),
);

describe('liveness on the simulated network', () => {
  test.prop([outage, fc.integer({ min: 1, max: 2 ** 31 })], { numRuns: 40 })(
    'an outage shorter than interruptMs is invisible; longer gives interrupted + resumed; past disconnectMs, timeout',
    (ms, seed) => {
      const net = new SimulatedNetwork({ seed, link: { latencyMs: 10, jitterMs: 2 } });
      const { client, server } = net.pair('a', 'b', { channels, timeouts });
      net.advance(500);
      const events: string[] = [];
      for (const [side, c] of [
        ['a', client],
        ['b', server],
      ] as const) {
        c.on('interrupted', () => events.push(`${side}:interrupted`));
        c.on('resumed', () => events.push(`${side}:resumed`));
        c.on('close', (e) => events.push(`${side}:${e.code}`));
      }
      net.cutBoth('a', 'b');
      net.advance(ms);
      net.heal();
      net.advance(2000);
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
