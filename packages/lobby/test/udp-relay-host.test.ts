import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { ManualClock } from '@netplay/transport';
import { afterEach, describe, expect, it } from 'vitest';
import { hostUdpThroughRelay, type UdpRelayHost } from '../src/node.js';
import { waitFor } from './helpers.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function bound(): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  cleanups.push(() => s.close());
  return s;
}

/**
 * A fake relay room port and a fake host listener on loopback around one `hostUdpThroughRelay`
 * whose time is a ManualClock: the sockets are real, the idle rule runs on virtual time.
 */
async function bridge(clock: ManualClock): Promise<{ host: UdpRelayHost; fromClient: (id: number) => void }> {
  const relay = await bound();
  const target = await bound();
  let bridgeAt: RemoteInfo | undefined;
  relay.on('message', (_msg, rinfo) => {
    bridgeAt = rinfo;
  });
  const host = await hostUdpThroughRelay({
    relayHost: '127.0.0.1',
    relayPort: relay.address().port,
    key: new Uint8Array(16),
    targetHost: '127.0.0.1',
    targetPort: target.address().port,
    keepaliveMs: 5000,
    idleMs: 30_000,
    clock,
  });
  cleanups.push(() => host.close());
  await waitFor(() => bridgeAt !== undefined, 2000, 'the bridge registers with the relay');
  const fromClient = (id: number) => {
    const d = Buffer.from([id >> 8, id & 0xff, 1, 2, 3]);
    relay.send(d, bridgeAt!.port, bridgeAt!.address);
  };
  return { host, fromClient };
}

describe('hostUdpThroughRelay', () => {
  it('closes a relayed client’s local socket once it was silent for idleMs, by the injected clock', async () => {
    const clock = new ManualClock(0);
    const { host, fromClient } = await bridge(clock);
    fromClient(7);
    await waitFor(() => host.clients === 1, 2000, 'client 7 gets a local socket');
    clock.advance(25_000); // keepalive ticks at 5, 10, ... 25 s: 25 s silent, under idleMs
    expect(host.clients).toBe(1);
    clock.advance(5000); // 30 s silent
    expect(host.clients).toBe(0);
  });

  it('keeps a client that is heard within idleMs', async () => {
    const clock = new ManualClock(0);
    const { host, fromClient } = await bridge(clock);
    fromClient(3);
    await waitFor(() => host.clients === 1, 2000, 'client 3 gets a local socket');
    clock.advance(20_000);
    fromClient(3);
    fromClient(4);
    await waitFor(() => host.clients === 2, 2000, 'client 4 gets a local socket');
    // Client 3 spoke again at 20 s (its datagram went before client 4's, which was read).
    clock.advance(15_000); // 35 s since client 3 first spoke, 15 s since it last did
    expect(host.clients).toBe(2);
    clock.advance(15_000); // 30 s since either spoke last
    expect(host.clients).toBe(0);
  });
});
