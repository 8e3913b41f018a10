import { ManualClock } from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { connectNode, listen } from '@netplay/transport-ws/server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ByteBucket, hostThroughRelay, LobbyClient, type LobbyServer, startLobby } from '../src/node.js';
import { announce, waitFor } from './helpers.js';

const channels = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function lobbyWith(
  relay: Parameters<typeof startLobby>[0] = {},
): Promise<{ lobby: LobbyServer; client: LobbyClient; ws: string }> {
  const lobby = await startLobby({ api: { rateLimits: false }, ...relay });
  cleanups.push(() => lobby.close());
  return { lobby, client: new LobbyClient(lobby.url), ws: lobby.url.replace('http', 'ws') };
}

function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
}

describe('ByteBucket', () => {
  it('lets a burst through, then asks to wait exactly the deficit at the rate', () => {
    const clock = new ManualClock(0);
    const b = new ByteBucket(1000, 500, clock.now());
    expect(b.take(500, clock.now())).toBe(0);
    expect(b.take(250, clock.now())).toBe(250);
    clock.advance(100);
    expect(b.waitMs(clock.now())).toBeCloseTo(150);
    clock.advance(150);
    expect(b.waitMs(clock.now())).toBe(0);
    clock.advance(10_000);
    expect(b.take(500, clock.now())).toBe(0); // refills to the burst, no more
    expect(b.take(1, clock.now())).toBeCloseTo(1);
  });
});

describe('relay (one node)', () => {
  async function relayedPair(options: Parameters<typeof startLobby>[0] = {}) {
    const { lobby, client, ws } = await lobbyWith(options);
    const room = await client.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const local = await listen({ channels, port: 0, host: '127.0.0.1', rateLimits: false });
    cleanups.push(() => local.close('done'));
    local.on('connection', (c) => c.on('message', ({ channel, data }) => c.send(channel, data)));
    const reg = hostThroughRelay({ relayUrl: ws, room: room.id, token: room.token, target: local.url });
    cleanups.push(() => reg.close());
    await reg.registered;
    const info = await client.join(room.id);
    const conn = connectNode(info.relay?.url ?? 'missing', { channels, rateLimits: false });
    cleanups.push(() => conn.close('done'));
    await new Promise<void>((res, rej) => {
      conn.on('open', () => res());
      conn.on('close', (e) => rej(new Error(`${e.code} ${e.reason}`)));
    });
    return { lobby, room, conn, reg };
  }

  it('carries a netplay-ws session end to end and counts the bytes per room', async () => {
    const { lobby, room, conn, reg } = await relayedPair();
    const got: Uint8Array[] = [];
    conn.on('message', ({ channel, data }) => {
      if (channel === 'input') got.push(data);
    });
    const big = new Uint8Array(100_000).map((_, i) => i * 7);
    conn.send('input', big);
    for (let i = 0; i < 10; i++) conn.send('input', new Uint8Array([i]));
    await waitFor(() => got.length === 11, 10_000, 'echoes');
    expect(got[0]).toEqual(big);
    expect(got.slice(1).map((d) => d[0])).toEqual([...Array(10).keys()]);
    expect(lobby.relay?.roomStats(room.id)?.bytes).toBeGreaterThan(200_000);
    expect(reg.links).toBe(1);
    expect((await new LobbyClient(lobby.url).list())[0]?.relay).toBe(false); // flag follows on the next heartbeat
    const closed = new Promise<string>((r) => conn.on('close', (e) => r(e.reason)));
    reg.close();
    expect(await closed).toBeTypeOf('string');
  });

  it('shapes a room to its byte budget (never faster) and pauses the sender instead of buffering', async () => {
    const rate = 64 << 10;
    const { lobby, room, conn } = await relayedPair({
      relay: { bytesPerSecond: rate, burstBytes: rate / 2, highWaterBytes: 16 << 10 },
    });
    const got: number[] = [];
    conn.on('message', ({ channel, data }) => {
      if (channel === 'input') got.push(data.length);
    });
    const t0 = performance.now();
    const chunk = new Uint8Array(16 << 10);
    for (let i = 0; i < 8; i++) conn.send('input', chunk);
    await waitFor(() => got.length === 8, 20_000, 'echoes');
    const elapsed = performance.now() - t0;
    // 2 × 128 KiB cross the relay (there and back) at 64 KiB/s. Free: the 32 KiB burst, and the
    // message of each direction that takes the budget below zero (it is sent, then the sender
    // pauses): at least (256 − 32 − 2 × 16) KiB / 64 KiB/s = 3 s.
    const bytes = 2 * 8 * (16 << 10);
    expect(elapsed).toBeGreaterThanOrEqual(((bytes - rate / 2 - 2 * (16 << 10)) / rate) * 1000 * 0.95);
    expect(lobby.relay?.roomStats(room.id)?.pauses).toBeGreaterThan(0);
  });

  it('refuses unknown rooms, wrong tokens, unknown links and times out a client without a link', async () => {
    const { lobby, client, ws } = await lobbyWith({ relay: { linkTimeoutMs: 300 } });
    const room = await client.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const unknown = new WebSocket(`${ws}/relay/join?room=nosuchroom`);
    expect(await closeOf(unknown)).toEqual({ code: 4001, reason: 'not-found: no relay host for room nosuchroom' });
    const badToken = new WebSocket(`${ws}/relay/host?room=${room.id}&token=${'x'.repeat(24)}`);
    expect((await closeOf(badToken)).reason).toContain('forbidden');
    const badId = new WebSocket(`${ws}/relay/join?room=a%20b`);
    expect((await closeOf(badId)).code).toBe(4002);
    // A host that never opens links: its client is closed with timeout.
    const host = new WebSocket(`${ws}/relay/host?room=${room.id}&token=${room.token}`);
    const control: string[] = [];
    host.on('message', (d) => control.push(d.toString()));
    await waitFor(() => control.length === 1, 2000, 'registered');
    expect(JSON.parse(control[0] as string)).toEqual({ v: 1, type: 'registered', room: room.id });
    const c = new WebSocket(`${ws}/relay/join?room=${room.id}`);
    const closed = await closeOf(c);
    expect(closed.code).toBe(4000);
    expect(closed.reason).toContain('no link within 300 ms');
    expect(JSON.parse(control[1] as string)).toEqual({ v: 1, type: 'client', client: 'c1' });
    const link = new WebSocket(`${ws}/relay/link?room=${room.id}&client=c9&token=${room.token}`);
    expect((await closeOf(link)).reason).toContain('no client c9');
    expect(lobby.relay?.stats.refused).toMatchObject({ 'not-found': 2, forbidden: 1, 'bad-request': 1, timeout: 1 });
    host.close();
  });

  it('a host that sends on its control socket is unregistered (its waiting clients too)', async () => {
    const { lobby, client, ws } = await lobbyWith();
    const room = await client.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const host = new WebSocket(`${ws}/relay/host?room=${room.id}&token=${room.token}`);
    await new Promise((r) => host.once('message', r));
    const waiting = new WebSocket(`${ws}/relay/join?room=${room.id}`);
    await new Promise((r) => host.once('message', r)); // the client announcement
    const hostClosed = closeOf(host);
    const clientClosed = closeOf(waiting);
    host.send('hello?');
    expect((await hostClosed).reason).toContain('a host sends nothing');
    expect((await clientClosed).code).toBe(4001);
    expect(lobby.relay?.roomCount).toBe(0);
    expect((await client.join(room.id)).relay).toBeUndefined();
  });

  it('carries a transport-udp session through the room’s UDP port', async () => {
    const { lobby, client, ws } = await lobbyWith();
    const room = await client.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const udpHost = await listenUdp({ channels, port: 0, host: '127.0.0.1' });
    cleanups.push(() => udpHost.close('done'));
    udpHost.on('connection', (c) => c.on('message', ({ channel, data }) => c.send(channel, data)));
    const wsHost = await listen({ channels, port: 0, host: '127.0.0.1' });
    cleanups.push(() => wsHost.close('done'));
    const reg = hostThroughRelay({
      relayUrl: ws,
      room: room.id,
      token: room.token,
      target: wsHost.url,
      udpTarget: { host: '127.0.0.1', port: udpHost.port },
    });
    cleanups.push(() => reg.close());
    await reg.registered;
    const info = await client.join(room.id);
    const udp = new URL((info.relay?.udp ?? 'missing').replace(/^udp:/, 'http:'));
    expect(udp.hostname).toBe('127.0.0.1');
    const conn = await connectUdp({ channels, host: udp.hostname, port: Number(udp.port) });
    cleanups.push(() => conn.close('done'));
    const got: number[] = [];
    conn.on('message', ({ channel, data }) => {
      if (channel === 'input') got.push(data[0] as number);
    });
    for (let i = 0; i < 30; i++) conn.send('input', new Uint8Array([i, 0, 0, 0]));
    await waitFor(() => got.length === 30, 10_000, 'UDP echoes');
    expect(got).toEqual([...Array(30).keys()]);
    const stats = lobby.relay?.udpStats(room.id);
    expect(stats?.toHost).toBeGreaterThan(1); // transport-udp packs several messages per datagram
    expect(stats?.toClients).toBeGreaterThan(1);
    expect(reg.udp?.clients).toBe(1);
    // Datagrams with a wrong key are dropped; the session carries on.
    const { createSocket } = await import('node:dgram');
    const forger = createSocket('udp4');
    const dropped = stats?.dropped ?? 0;
    forger.send(
      Buffer.concat([Buffer.from('NPRH'), Buffer.alloc(16), Buffer.from([0, 1, 9])]),
      Number(udp.port),
      '127.0.0.1',
    );
    await waitFor(() => (lobby.relay?.udpStats(room.id)?.dropped ?? 0) > dropped, 2000, 'forged datagram dropped');
    forger.close();
    conn.send('input', new Uint8Array([99]));
    await waitFor(() => got.includes(99), 5000, 'echo after the forgery');
    // Unregistering closes the room's UDP port.
    reg.close();
    await waitFor(() => lobby.relay?.udpStats(room.id) === undefined, 2000, 'UDP port closed');
  });

  it('counts the payload bytes it relays, both directions and every room, in stats.bytes (rooms gone included)', async () => {
    const { lobby, client, ws } = await lobbyWith();
    /** A host's control socket, a client and the host's link for it, as raw WebSockets (no netplay-ws framing). */
    async function rawPair(): Promise<{ id: string; host: WebSocket; joiner: WebSocket; link: WebSocket }> {
      const room = await client.announce(announce({ endpoints: [] }));
      cleanups.push(() => room.close());
      const host = new WebSocket(`${ws}/relay/host?room=${room.id}&token=${room.token}`);
      cleanups.push(() => host.terminate());
      await new Promise((r) => host.once('message', r)); // registered
      const joiner = new WebSocket(`${ws}/relay/join?room=${room.id}`);
      cleanups.push(() => joiner.terminate());
      const announced = JSON.parse(String(await new Promise((r) => host.once('message', r)))) as { client: string };
      const link = new WebSocket(`${ws}/relay/link?room=${room.id}&client=${announced.client}&token=${room.token}`);
      cleanups.push(() => link.terminate());
      await Promise.all(
        [joiner, link].map((w) => (w.readyState === WebSocket.OPEN ? 0 : new Promise((r) => w.once('open', r)))),
      );
      return { id: room.id, host, joiner, link };
    }
    /** Sends `payloads` on `from` and waits until `to` has received as many messages. */
    async function relay(from: WebSocket, to: WebSocket, payloads: (Uint8Array | string)[]): Promise<void> {
      let got = 0;
      const count = () => got++;
      to.on('message', count);
      for (const p of payloads) from.send(p);
      await waitFor(() => got === payloads.length, 5000, `${payloads.length} relayed messages`);
      to.off('message', count);
    }
    expect(lobby.relay?.stats.bytes).toBe(0);
    const a = await rawPair();
    // Client to host: 100 + 1 bytes binary and a text message of 6 UTF-8 bytes; host to client: 3000 + 2.
    await relay(a.joiner, a.link, [new Uint8Array(100).fill(7), new Uint8Array([1]), 'héllo']);
    await relay(a.link, a.joiner, [new Uint8Array(3000).fill(9), 'ok']);
    expect(lobby.relay?.roomStats(a.id)).toMatchObject({ bytes: 3109, messages: 5 });
    expect(lobby.relay?.stats.bytes).toBe(3109);
    // The room goes (its host leaves); the node's count keeps its bytes, and a second room adds to it.
    a.host.close();
    await waitFor(() => lobby.relay?.roomStats(a.id) === undefined, 2000, 'room A unregistered');
    expect(lobby.relay?.stats.bytes).toBe(3109);
    const b = await rawPair();
    await relay(b.link, b.joiner, [new Uint8Array(500)]);
    expect(lobby.relay?.roomStats(b.id)?.bytes).toBe(500);
    expect(lobby.relay?.stats.bytes).toBe(3609);
  });

  it('caps clients waiting for a link per address', async () => {
    const { client, ws } = await lobbyWith({ relay: { pendingPerAddress: 2, linkTimeoutMs: 5000 } });
    const room = await client.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const host = new WebSocket(`${ws}/relay/host?room=${room.id}&token=${room.token}`);
    cleanups.push(() => host.terminate());
    await new Promise((r) => host.once('message', r));
    const waiting = [
      new WebSocket(`${ws}/relay/join?room=${room.id}`),
      new WebSocket(`${ws}/relay/join?room=${room.id}`),
    ];
    for (const w of waiting) cleanups.push(() => w.terminate());
    await Promise.all(waiting.map((w) => new Promise((r) => w.once('open', r))));
    const third = new WebSocket(`${ws}/relay/join?room=${room.id}`);
    const closed = await closeOf(third);
    expect(closed.code).toBe(4001);
    expect(closed.reason).toContain('limit: too many relay clients from');
  });
});
