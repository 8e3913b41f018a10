import type { Connection } from '@netplay/transport';
import { type ConformanceHarness, defineTransportConformance, pollUntil } from '@netplay/transport/conformance';
import { describe, it } from 'vitest';
import { UdpRelay } from '../src/relay.js';
import { connectUdp, listenUdp } from '../src/socket.js';

let seed = 1;

const harness: ConformanceHarness = {
  name: 'UDP (node:dgram) through a seeded loopback relay',
  async pair({ channels, timeouts, rateLimits }) {
    // The kit's rate limits go to both ends when it gives them; the transport's defaults otherwise.
    const limits = rateLimits === undefined ? {} : { rateLimits };
    const listener = await listenUdp({ channels, timeouts, host: '127.0.0.1', ...limits });
    const relay = await UdpRelay.start({ targetHost: '127.0.0.1', targetPort: listener.port, seed: seed++ });
    let server: Connection | undefined;
    listener.on('connection', (c) => {
      server ??= c;
    });
    const client = await connectUdp({ channels, timeouts, host: relay.host, port: relay.port, ...limits });
    await pollUntil(() => server !== undefined, 2000);
    if (!server) throw new Error('the listener never saw the connection');
    return {
      client,
      server,
      until: pollUntil,
      impair(imp) {
        relay.impair({
          loss: imp.loss ?? 0,
          duplicate: imp.duplicate ?? 0,
          reorder: imp.reorder ?? 0,
          latencyMs: imp.latencyMs ?? 0,
          jitterMs: imp.jitterMs ?? 0,
        });
      },
      cut() {
        relay.cut();
      },
      async dispose() {
        client.close('dispose');
        await pollUntil(() => client.finished, 2000);
        listener.close('dispose');
        await relay.close();
        await listener.closed;
      },
    };
  },
};

defineTransportConformance(harness, { describe, it });
