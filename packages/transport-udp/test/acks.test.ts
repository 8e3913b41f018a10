import type { ChannelSpec } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [{ name: 'bulk', kind: 'reliable' }];

describe('delayed acks', () => {
  function quietPair() {
    // No keepalive Pings in the way (their acks would hide the timing under test).
    const config = { keepaliveMs: 10_000, timeouts: { interruptMs: 30_000, disconnectMs: 60_000 } };
    const sim = new SimUdp(channels, { seed: 3, link: { latencyMs: 10 }, config });
    const { client, server } = sim.pair();
    sim.net.advance(300); // handshake pings acknowledged; nothing pending either way
    return { sim, client, server };
  }

  it('a packet in order waits for more (up to a tick) before it is acknowledged', () => {
    const { sim, client, server } = quietPair();
    const before = server.stats.packetsSent;
    client.send('bulk', new Uint8Array(1024));
    sim.net.advance(10.5); // arrived at +10 ms
    expect(server.stats.packetsSent).toBe(before);
    sim.net.advance(10);
    expect(server.stats.packetsSent).toBe(before + 1); // one tick later
  });

  it('a packet out of order (one before it lost) is acknowledged at once, so loss recovery does not wait', () => {
    const { sim, client, server } = quietPair();
    sim.net.cut('client', 'server');
    client.send('bulk', new Uint8Array(1024));
    sim.net.advance(1); // sent and lost
    sim.net.heal();
    const before = server.stats.packetsSent;
    client.send('bulk', new Uint8Array(1024));
    sim.net.advance(10.5); // arrived at +10 ms, after a gap
    expect(server.stats.packetsSent).toBe(before + 1);
    let got = 0;
    server.on('message', () => got++);
    sim.net.runUntil(() => got === 2, 5000);
    expect(got).toBe(2);
    expect(client.stats.retransmissions).toBe(1);
  });
});
