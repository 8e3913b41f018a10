import { describe, it } from 'vitest';
import { type ConformanceHarness, defineTransportConformance } from '../src/conformance.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

let seed = 1000;

const harness: ConformanceHarness = {
  name: 'MemoryTransport on SimulatedNetwork',
  async pair({ channels, timeouts, rateLimits }) {
    const net = new SimulatedNetwork({ seed: seed++, link: { latencyMs: 15, jitterMs: 3 } });
    const { client, server } = net.pair('client', 'server', {
      channels,
      timeouts,
      ...(rateLimits === undefined ? {} : { rateLimits }),
    });
    return {
      client,
      server,
      async until(predicate, budgetMs) {
        return net.runUntil(predicate, budgetMs);
      },
      impair(imp) {
        net.setLinkBoth('client', 'server', {
          loss: imp.loss ?? 0,
          duplicate: imp.duplicate ?? 0,
          reorder: imp.reorder ?? 0,
          latencyMs: imp.latencyMs ?? 15,
          jitterMs: imp.jitterMs ?? 0,
        });
      },
      cut() {
        net.cutBoth('client', 'server');
      },
      async dispose() {
        client.close('dispose');
        server.close('dispose');
      },
    };
  },
};

defineTransportConformance(harness, { describe, it });
