import { type ConformanceHarness, defineTransportConformance, pollUntil } from '@netplay/transport/conformance';
import { describe, it } from 'vitest';
import { makePair } from './harness.js';

// Two peers in one process over node-datachannel on 127.0.0.1, introduced by a real signaling
// server. `cut` silences every data channel of both ends (a shim at the data channel boundary).
// `impair` is omitted: the suite's "under loss" cases then run on a clean loopback link (SCTP's
// own retransmission is what makes reliable channels reliable here, and a drop shim above it would
// not test it); see the README.
const harness: ConformanceHarness = {
  name: 'transport-webrtc over node-datachannel on loopback',
  async pair({ channels, timeouts, rateLimits }) {
    const p = await makePair(channels, timeouts, rateLimits ? { rateLimits } : {});
    return {
      client: p.client,
      server: p.host,
      until: (predicate, budgetMs) => pollUntil(predicate, budgetMs),
      cut: () => {
        p.link.cut = true;
      },
      dispose: () => p.dispose(),
    };
  },
};

defineTransportConformance(harness, { describe, it });
