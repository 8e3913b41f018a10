import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { ChannelSpec } from '../src/contract.js';
import { expectedOutageEvents, OUTAGE_TIMEOUTS, runOutage } from '../src/outage.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

const channels: readonly ChannelSpec[] = [{ name: 'rel', kind: 'reliable' }];

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
      const { client, server } = net.pair('a', 'b', { channels, timeouts: OUTAGE_TIMEOUTS });
      net.advance(500);
      expect(runOutage(net, client, server, ['a', 'b'], ms)).toEqual(expectedOutageEvents(ms));
    },
  );
});
