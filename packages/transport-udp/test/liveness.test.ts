import { fc, test } from '@fast-check/vitest';
import { type ChannelSpec, expectedOutageEvents, OUTAGE_TIMEOUTS, runOutage } from '@netplay/transport';
import { describe, expect } from 'vitest';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [{ name: 'rel', kind: 'reliable' }];
const config = { timeouts: OUTAGE_TIMEOUTS };

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
      expect(runOutage(sim.net, client, server, ['a', 'server'], ms)).toEqual(expectedOutageEvents(ms));
    },
  );
});
