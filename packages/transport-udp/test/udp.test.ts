import { createSocket, type Socket } from 'node:dgram';
import { type ChannelSpec, type Connection, Prng, TransportError } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import type { UdpPeer } from '../src/peer.js';
import { UdpRelay } from '../src/relay.js';
import { connectUdp, listenUdp, type UdpListener } from '../src/socket.js';
import {
  encodeDataPacket,
  encodeFragmentFrame,
  HELLO_BYTES,
  PacketType,
  PROTOCOL_MAGIC,
  putU32,
  seal,
} from '../src/wire.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  options: { relaySeed?: number; maxConnections?: number; host?: string } = {},
): Promise<{ listener: UdpListener; relay: UdpRelay | undefined; client: UdpPeer; server: Connection }> {
  const host = options.host ?? '127.0.0.1';
  const listener = await listenUdp({
    channels,
    host,
    ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
  });
  cleanups.push(async () => {
    listener.close();
    await listener.closed;
  });
  let relay: UdpRelay | undefined;
  if (options.relaySeed !== undefined) {
    relay = await UdpRelay.start({ targetHost: host, targetPort: listener.port, seed: options.relaySeed });
    const r = relay;
    cleanups.push(() => r.close());
  }
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server ??= c;
  });
  const client = await connectUdp({
    channels,
    host: relay ? relay.host : host,
    port: relay ? relay.port : listener.port,
  });
  cleanups.push(async () => {
    client.close();
    await pollUntil(() => client.finished, 2000);
  });
  await pollUntil(() => server !== undefined, 2000);
  if (!server) throw new Error('no server connection');
  return { listener, relay, client, server };
}

async function rawSocket(host = '127.0.0.1'): Promise<{ socket: Socket; replies: Uint8Array[] }> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  const replies: Uint8Array[] = [];
  socket.on('message', (m) => replies.push(new Uint8Array(m)));
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { socket, replies };
}

function send(socket: Socket, d: Uint8Array, port: number, host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve) => socket.send(d, port, host, () => resolve()));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

describe('UDP transport over real sockets', () => {
  it('moves 1 MiB reliable transfers intact through a relay at 10 % loss, both ways', async () => {
    const { relay, client, server } = await setup({ relaySeed: 10 });
    relay!.impair({ loss: 0.1, latencyMs: 1, jitterMs: 2, duplicate: 0.01, reorder: 0.02 });
    const up = new Prng(1).fill(new Uint8Array(1 << 20));
    const down = new Prng(2).fill(new Uint8Array((1 << 20) + 777));
    const got: Record<string, Uint8Array> = {};
    server.on('message', (m) => {
      got.up = m.data;
    });
    client.on('message', (m) => {
      got.down = m.data;
    });
    client.send('bulk', up);
    server.send('bulk', down);
    expect(await pollUntil(() => got.up !== undefined && got.down !== undefined, 30_000)).toBe(true);
    expect(sameBytes(got.up!, up)).toBe(true);
    expect(sameBytes(got.down!, down)).toBe(true);
    expect(relay!.stats.dropped).toBeGreaterThan(50);
    expect(client.stats.retransmissions).toBeGreaterThan(0);
  });

  it('spoofed datagrams (bad CRC, wrong session id, unknown address) change nothing and are counted', async () => {
    const { listener, client, server } = await setup();
    const before = { ...server.stats };
    const drops = { ...listener.drops };
    let messages = 0;
    server.on('message', () => messages++);
    // A well-formed DATA packet carrying a reliable message, as the real client would send it.
    const forge = (session: number) =>
      encodeDataPacket(session, encodeFragmentFrame(0, 0, 1, 0, 1152, new Uint8Array([42])), { seq: 999 });
    // From an unknown address (another socket) with the right session id.
    const stranger = await rawSocket();
    await send(stranger.socket, forge(client.session), listener.port);
    // From an unknown address: bad CRC.
    const bad = forge(client.session);
    bad[0]! ^= 0xff;
    await send(stranger.socket, bad, listener.port);
    // Wrong session id from the client's own address: we cannot spoof the source address without raw
    // sockets, so feed it to the listener core as if it came from the client's address.
    const clientAddress = server.remoteAddress;
    listener.core.input(forge((client.session ^ 0x1234_5678) >>> 0), clientAddress);
    // Bad CRC from the client's address.
    listener.core.input(bad, clientAddress);
    await new Promise((r) => setTimeout(r, 50));
    // An unknown address with a session id is dropped before its CRC is even computed.
    expect(listener.drops.unknownAddress).toBe(drops.unknownAddress + 2);
    expect(listener.drops.badCrc).toBe(drops.badCrc + 1);
    expect(listener.drops.badSession).toBe(drops.badSession + 1);
    expect(messages).toBe(0);
    expect(server.stats.packetsReceived - before.packetsReceived).toBeLessThan(20); // only keepalive traffic
    expect(server.state).toBe('open');
    expect(listener.connections.length).toBe(1);
    // The connection still works.
    client.send('input', new Uint8Array([7]));
    expect(await pollUntil(() => messages === 1, 2000)).toBe(true);
  });

  it('a flood of handshake packets from one address gets no reply larger than each request', async () => {
    const { listener } = await setup();
    const { socket, replies } = await rawSocket();
    const prng = new Prng(5);
    let requestBytes = 0;
    let smallest = Number.POSITIVE_INFINITY;
    const count = 300;
    for (let i = 0; i < count; i++) {
      const size = prng.int(9, 200);
      const d = prng.fill(new Uint8Array(size));
      putU32(d, 4, 0);
      d[8] = i % 3 === 0 ? PacketType.Connect : PacketType.Hello;
      putU32(d, 9, PROTOCOL_MAGIC);
      seal(d);
      requestBytes += size;
      if (size >= HELLO_BYTES) smallest = Math.min(smallest, size);
      await send(socket, d, listener.port);
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(replies.length).toBeGreaterThan(0);
    for (const r of replies) {
      expect(r.length).toBeLessThanOrEqual(smallest);
      expect(r[8]).toBe(PacketType.Challenge);
    }
    expect(listener.core.handshakeReplies.bytes).toBeLessThanOrEqual(requestBytes);
    expect(listener.core.sessionCount).toBe(1); // only the real client
    expect(listener.drops.handshakeIgnored).toBeGreaterThan(0);
  });

  it('refuses connections past maxConnections with TransportError(refused)', async () => {
    const { listener } = await setup({ maxConnections: 1 });
    const errors: string[] = [];
    listener.on('error', (e) => errors.push(e.code));
    const attempt = connectUdp({ channels, host: '127.0.0.1', port: listener.port });
    await expect(attempt).rejects.toBeInstanceOf(TransportError);
    await expect(attempt).rejects.toMatchObject({ code: 'refused' });
    expect(errors).toEqual(['refused']);
  });

  it('rejects a connect with a mismatched channel list', async () => {
    const { listener } = await setup();
    await expect(
      connectUdp({ channels: [{ name: 'x', kind: 'reliable' }], host: '127.0.0.1', port: listener.port }),
    ).rejects.toMatchObject({ code: 'refused' });
  });

  it('times out connecting to a port where nothing answers', async () => {
    const { socket } = await rawSocket(); // bound, silent
    const port = socket.address().port;
    await expect(connectUdp({ channels, host: '127.0.0.1', port, timeouts: { connectMs: 300 } })).rejects.toMatchObject(
      { code: 'timeout' },
    );
  });

  it('sends past maxMessageBytes throw too-large; the connection survives', async () => {
    const { client } = await setup();
    expect(() => client.send('bulk', new Uint8Array(client.limits.maxMessageBytes + 1))).toThrow(
      expect.objectContaining({ code: 'too-large' }),
    );
    expect(client.state).toBe('open');
  });

  it('reports interrupted and resumed across a short outage, and survives it', async () => {
    const listener = await listenUdp({ channels, timeouts: { interruptMs: 300, disconnectMs: 5000 } });
    const relay = await UdpRelay.start({ targetHost: '127.0.0.1', targetPort: listener.port, seed: 3 });
    cleanups.push(async () => {
      listener.close();
      await relay.close();
      await listener.closed;
    });
    const client = await connectUdp({
      channels,
      host: relay.host,
      port: relay.port,
      timeouts: { interruptMs: 300, disconnectMs: 5000 },
    });
    cleanups.push(() => client.close());
    const events: string[] = [];
    client.on('interrupted', () => events.push('interrupted'));
    client.on('resumed', (e) => events.push(e.interruptedMs >= 300 ? 'resumed' : 'resumed-too-early'));
    relay.cut();
    await pollUntil(() => events.length === 1, 2000);
    relay.cut(false);
    await pollUntil(() => events.length === 2, 2000);
    expect(events).toEqual(['interrupted', 'resumed']);
    expect(client.state).toBe('open');
  });

  it('closing the listener closes its clients with the reason', async () => {
    const { listener, client } = await setup();
    let close: { code: string; reason: string } | undefined;
    client.on('close', (e) => {
      close = e;
    });
    listener.close('server shutting down');
    expect(await pollUntil(() => close !== undefined, 3000)).toBe(true);
    expect(close).toEqual({ code: 'remote', reason: 'server shutting down' });
  });

  it('works over IPv6 loopback (or ::1 is verifiably unavailable here)', async () => {
    const probe = createSocket({ type: 'udp6', ipv6Only: true });
    const available = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.bind(0, '::1', () => resolve(true));
    });
    await new Promise<void>((resolve) => {
      try {
        probe.close(() => resolve());
      } catch {
        resolve();
      }
    });
    if (!available) {
      console.warn('IPv6 loopback ::1 is not available on this machine: the IPv6 exchange was not run.');
      await expect(listenUdp({ channels, host: '::1' })).rejects.toMatchObject({ code: 'io' });
      return;
    }
    const { client, server, listener } = await setup({ host: '::1' });
    expect(listener.localAddress.startsWith('[::1]:')).toBe(true);
    const got: number[] = [];
    server.on('message', (m) => got.push(m.data[0]!));
    client.send('input', new Uint8Array([9]));
    expect(await pollUntil(() => got.length === 1, 2000)).toBe(true);
  });
});
