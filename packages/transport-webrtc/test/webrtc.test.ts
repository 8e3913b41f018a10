import type { CloseEvent, Connection, TransportError } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  type SignalingServer,
  type WebRtcListener,
} from '../src/server.js';
import { makePair } from './harness.js';

const CHANNELS = [
  { name: 'control', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function hostIn(
  room: string,
  extra: {
    channels?: typeof CHANNELS | readonly { name: string; kind: 'reliable' | 'unreliable' }[];
    maxConnections?: number;
  } = {},
): Promise<{ server: SignalingServer; listener: WebRtcListener }> {
  const server = await listenSignaling();
  cleanup.push(() => server.close());
  const listener = await listenWebRtcNode({
    signaling: { url: server.url, room, peer: 'host' },
    channels: extra.channels ?? CHANNELS,
    rtc: LOOPBACK_RTC,
    ...(extra.maxConnections ? { maxConnections: extra.maxConnections } : {}),
  });
  cleanup.push(() => listener.close());
  return { server, listener };
}

function closeOf(conn: Connection): () => CloseEvent | undefined {
  let ev: CloseEvent | undefined;
  conn.on('close', (e) => {
    ev = e;
  });
  return () => ev;
}

describe('transport-webrtc over node-datachannel', () => {
  it('a channel mismatch is refused with the host channel list as the reason', async () => {
    const { server, listener } = await hostIn('mismatch');
    const errors: TransportError[] = [];
    listener.on('error', (e) => errors.push(e));
    const client = connectWebRtcNode({
      signaling: { url: server.url, room: 'mismatch', peer: 'guest' },
      to: 'host',
      channels: [{ name: 'control', kind: 'reliable' }],
      rtc: LOOPBACK_RTC,
    });
    cleanup.push(() => client.close());
    const closed = closeOf(client);
    await pollUntil(() => closed() !== undefined, 10_000);
    expect(closed()?.code).toBe('refused');
    expect(closed()?.reason).toBe('channel mismatch: server has r:control,u:state');
    await pollUntil(() => errors.length > 0, 2000);
    expect(errors[0]?.code).toBe('refused');
    expect(listener.connections).toHaveLength(0);
  });

  it('connecting to a peer that is not in the room is refused at once', async () => {
    const { server } = await hostIn('lonely');
    const client = connectWebRtcNode({
      signaling: { url: server.url, room: 'lonely', peer: 'guest' },
      to: 'nobody',
      channels: CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    const closed = closeOf(client);
    await pollUntil(() => closed() !== undefined, 5000);
    expect(closed()?.code).toBe('refused');
    expect(closed()?.reason).toMatch(/no peer "nobody" in room "lonely"/);
  });

  it('an unreachable signaling server ends the connection with an io error', async () => {
    const client = connectWebRtcNode({
      signaling: { url: 'ws://127.0.0.1:9/none', room: 'r', peer: 'guest' },
      to: 'host',
      channels: CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    const closed = closeOf(client);
    await pollUntil(() => closed() !== undefined, 5000);
    expect(closed()?.code).toBe('error');
    expect(closed()?.error?.code).toBe('io');
  });

  it('a host that leaves while a guest negotiates ends the guest with a clear error', async () => {
    const server = await listenSignaling();
    cleanup.push(() => server.close());
    // A "host" that joins the room but never answers, then leaves.
    const { SignalingClient } = await import('../src/index.js');
    const { NodeWebSocket } = await import('../src/node.js');
    const mute = await SignalingClient.join({ url: server.url, room: 'mute', peer: 'host', WebSocket: NodeWebSocket });
    const client = connectWebRtcNode({
      signaling: { url: server.url, room: 'mute', peer: 'guest' },
      to: 'host',
      channels: CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    const closed = closeOf(client);
    await pollUntil(() => mute.peers.includes('guest'), 5000);
    mute.close();
    await pollUntil(() => closed() !== undefined, 5000);
    expect(closed()?.code).toBe('error');
    expect(closed()?.reason).toMatch(/signaling lost: peer "host" left the room/);
  });

  it('one host, three guests: each gets its own connection and its own echo', async () => {
    const { server, listener } = await hostIn('party');
    listener.on('connection', (c) => c.on('message', (m) => c.send(m.channel, m.data)));
    const guests = ['g1', 'g2', 'g3'].map((peer) =>
      connectWebRtcNode({
        signaling: { url: server.url, room: 'party', peer },
        to: 'host',
        channels: CHANNELS,
        rtc: LOOPBACK_RTC,
      }),
    );
    for (const g of guests) cleanup.push(() => g.close());
    const echoes = guests.map(() => [] as number[]);
    guests.forEach((g, i) => {
      g.on('message', (m) => echoes[i]!.push(m.data[0]!));
      g.send('control', new Uint8Array([i + 1]));
    });
    await pollUntil(() => echoes.every((e) => e.length === 1), 10_000);
    expect(echoes).toEqual([[1], [2], [3]]);
    expect(listener.connections).toHaveLength(3);
    // Each peer connection's remote address is its selected candidate (test/remote-address.test.ts).
    const addresses = listener.connections.map((c) => c.remoteAddress);
    for (const a of addresses) expect(a).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(new Set(addresses).size).toBe(3);
  });

  it('a reliable send past maxBufferedBytes throws limit and leaves the connection open', async () => {
    const p = await makePair(CHANNELS, {}, { maxBufferedBytes: 1 << 20 });
    cleanup.push(() => p.dispose());
    let threw: unknown;
    try {
      for (let i = 0; i < 64; i++) p.client.send('control', new Uint8Array(256 << 10));
    } catch (e) {
      threw = e;
    }
    expect((threw as TransportError | undefined)?.code).toBe('limit');
    expect(p.client.state).toBe('open');
    expect(p.client.stats.sendQueueBytes).toBeGreaterThan(0);
  });

  it('large reliable messages are fragmented below the SCTP message size and the limits are agreed', async () => {
    const p = await makePair(CHANNELS, {}, { maxMessageBytes: 4 << 20 });
    cleanup.push(() => p.dispose());
    expect(p.client.limits.maxMessageBytes).toBe(4 << 20);
    expect(p.client.limits.maxUnreliableBytes).toBeLessThanOrEqual(16 << 10);
    const got: Uint8Array[] = [];
    p.host.on('message', (m) => got.push(m.data));
    const big = new Uint8Array(3 << 20).map((_, i) => i * 7);
    p.client.send('control', big);
    await pollUntil(() => got.length === 1, 10_000);
    expect(got[0]?.length).toBe(big.length);
    expect(Buffer.compare(got[0]!, big)).toBe(0);
    // 3 MiB in 64 KiB frames: dozens of data-channel messages, not one.
    expect(p.client.stats.packetsSent).toBeGreaterThan(48);
  });

  it('unreliable bursts over a real data channel: delivered + replaced = sent, in order, the last always arrives', async () => {
    const p = await makePair(CHANNELS, {}, { highWaterBytes: 1 });
    cleanup.push(() => p.dispose());
    const got: number[] = [];
    p.host.on('message', (m) => got.push(m.data[0]! | (m.data[1]! << 8)));
    const msg = new Uint8Array(8000);
    for (let i = 0; i < 200; i++) {
      msg[0] = i & 0xff;
      msg[1] = i >> 8;
      p.client.send('state', msg);
    }
    await pollUntil(() => got[got.length - 1] === 199, 5000);
    await pollUntil(() => false, 100);
    expect(got[got.length - 1]).toBe(199);
    // How much is held back depends on how fast node-datachannel drains its buffer (on a fast
    // machine, nothing may be); test/outbox.test.ts proves the hold-back with a controlled buffer.
    expect(got.length + p.client.stats.staleDropped).toBe(200);
    for (let i = 1; i < got.length; i++) expect(got[i]!).toBeGreaterThan(got[i - 1]!);
  });

  it('a guest that connects again under the same name replaces its old connection', async () => {
    const { server, listener } = await hostIn('again');
    const first = connectWebRtcNode({
      signaling: { url: server.url, room: 'again', peer: 'g' },
      to: 'host',
      channels: CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    cleanup.push(() => first.close());
    const firstClosed = closeOf(first);
    await pollUntil(() => first.state === 'open' && listener.connections.length === 1, 10_000);
    // Its signaling socket closed at open, so the name is free in the room again.
    await pollUntil(() => false, 100);
    const second = connectWebRtcNode({
      signaling: { url: server.url, room: 'again', peer: 'g' },
      to: 'host',
      channels: CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    cleanup.push(() => second.close());
    await pollUntil(() => second.state === 'open' && firstClosed() !== undefined, 10_000);
    expect(second.state).toBe('open');
    expect(firstClosed()).toMatchObject({ code: 'remote', reason: 'replaced: the peer connected again' });
    await pollUntil(() => listener.connections.length === 1, 2000);
    expect(listener.connections).toHaveLength(1);
  });
});
