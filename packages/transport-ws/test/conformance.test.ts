import { type ConformanceHarness, defineTransportConformance, pollUntil } from '@netplay/transport/conformance';
import { describe, it } from 'vitest';
import { makePair } from './harness.js';

// Real sockets on 127.0.0.1: a ws listener, a TCP relay in front of it (so `cut` can silence the
// link without closing TCP), and a Node client. TCP cannot be impaired, so `impair` is omitted.
// `makePair` passes its extra options (here `rateLimits`) to the listener and the client alike.
const harness: ConformanceHarness = {
  name: 'transport-ws over loopback',
  async pair({ channels, timeouts, rateLimits }) {
    // The kit's rateLimits go to both ends; absent, both ends keep the transport's defaults.
    const p = await makePair(channels, timeouts, rateLimits === undefined ? {} : { rateLimits });
    return {
      client: p.client,
      server: p.server,
      until: (predicate, budgetMs) => pollUntil(predicate, budgetMs),
      cut: () => p.relay.cut(),
      dispose: () => p.dispose(),
    };
  },
};

defineTransportConformance(harness, { describe, it });
