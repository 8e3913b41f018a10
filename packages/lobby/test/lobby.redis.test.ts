import type { Connection, Listener } from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { connectWebRtcNode, LOOPBACK_RTC, listenWebRtcNode } from '@netplay/transport-webrtc/server';
import { connectNode, listen } from '@netplay/transport-ws/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hostThroughRelay, LobbyClient, type LobbyServer, type RoomInfo, startLobby } from '../src/node.js';
import { announce, FeedProbe, waitFor } from './helpers.js';
import { RedisProcess } from './redis-server.js';

let redis: RedisProcess;
const nodes: LobbyServer[] = [];
const cleanups: (() => unknown)[] = [];
let prefixN = 0;

beforeAll(async () => {
  redis = await RedisProcess.start();
});
afterAll(async () => {
  await redis?.kill();
});
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
  for (const n of nodes.splice(0)) await n.close().catch(() => {});
});

/** Two nodes on the same Redis (a fresh key prefix per test). */
async function twoNodes(ttlMs = 1500) {
  const prefix = `t${prefixN++}:`;
  const api = { rateLimits: false as const };
  const a = await startLobby({ redis: redis.url, redisPrefix: prefix, nodeId: 'A', ttlMs, api });
  const b = await startLobby({ redis: redis.url, redisPrefix: prefix, nodeId: 'B', ttlMs, api });
  nodes.push(a, b);
  return { a, b, ca: new LobbyClient(a.url), cb: new LobbyClient(b.url) };
}

const channels = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;

function opened(conn: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    conn.on('open', () => resolve());
    conn.on('close', ({ code, reason }) => reject(new Error(`closed ${code} ${reason}`)));
  });
}

function echo(listener: Listener): void {
  listener.on('connection', (c) => c.on('message', ({ channel, data }) => c.send(channel, data)));
}

async function roundTrip(conn: Connection, n: number): Promise<number[]> {
  const got: number[] = [];
  conn.on('message', ({ channel, data }) => {
    if (channel === 'input') got.push(data[0] as number);
  });
  for (let i = 0; i < n; i++) conn.send('input', new Uint8Array([i, 1, 2, 3]));
  await waitFor(() => got.length >= n, 10_000, `${n} echoes`);
  return got;
}

describe('two lobby nodes on one Redis', () => {
  it('a room announced on A is listed on B within 1 s, and B’s feed tells it', async () => {
    const { a, b, ca, cb } = await twoNodes();
    const feed = new FeedProbe(`${b.url.replace('http', 'ws')}/feed`);
    await feed.until(() => feed.of('snapshot')[0]);
    const t0 = Date.now();
    const room = await ca.announce(announce({ name: 'on A' }));
    cleanups.push(() => room.close());
    const seen = await waitFor(async () => (await cb.list()).find((r) => r.id === room.id), 1000, 'room on B');
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(seen).toMatchObject({ name: 'on A', node: 'A' });
    await feed.until(() => feed.of('room').find((m) => m.room.id === room.id), 1000);
    expect(a.nodeId).toBe('A');
    feed.ws.close();
  });

  it('killing node A without cleanup makes its rooms vanish from B within the TTL; B keeps serving', async () => {
    const { a, b, ca, cb } = await twoNodes(1500);
    const kept = await cb.announce(announce({ name: 'on B' }));
    cleanups.push(() => kept.close());
    const rooms = [];
    for (let i = 0; i < 3; i++) rooms.push(await ca.announce(announce({ name: `A${i}` })));
    await waitFor(async () => (await cb.list()).length === 4, 2000, 'four rooms on B');
    const feed = new FeedProbe(`${b.url.replace('http', 'ws')}/feed`);
    await feed.until(() => feed.of('snapshot')[0]);
    // Node A dies: its sockets are cut and it removes nothing. Its hosts' heartbeats now fail.
    const killed = Date.now();
    nodes.splice(nodes.indexOf(a), 1);
    await a.close(true);
    await waitFor(async () => (await cb.list()).length === 1, 1500 + 2000, 'A’s rooms gone');
    const after = Date.now() - killed;
    expect(after).toBeLessThan(1500 + 1000);
    expect((await cb.list()).map((r: RoomInfo) => r.name)).toEqual(['on B']);
    await feed.until(() => feed.of('removed').length === 3 || undefined);
    expect(new Set(feed.of('removed').map((m) => m.reason))).toEqual(new Set(['expired']));
    for (const r of rooms) expect(r.failures).toBeGreaterThan(0);
    for (const r of rooms) await r.close();
    feed.ws.close();
  });

  it('survives a Redis restart: heartbeats re-announce the rooms', async () => {
    const { ca, cb } = await twoNodes(1500);
    const r1 = await ca.announce(announce({ name: 'one' }));
    const r2 = await cb.announce(announce({ name: 'two' }));
    cleanups.push(
      () => r1.close(),
      () => r2.close(),
    );
    await waitFor(async () => (await ca.list()).length === 2, 2000, 'two rooms');
    const restarted = Date.now();
    await redis.restart();
    // The new Redis is empty; each room is back once a heartbeat re-created it (same id, new createdAt).
    const back = async (id: string) => {
      try {
        const r = await cb.get(id);
        return r.createdAt >= restarted ? r : undefined;
      } catch {
        return undefined;
      }
    };
    const one = await waitFor(() => back(r1.id), 6000, 'room one re-announced');
    const two = await waitFor(() => back(r2.id), 6000, 'room two re-announced');
    expect([one.name, two.name]).toEqual(['one', 'two']);
    // Both nodes list them again (their caches follow the new Redis).
    for (const c of [ca, cb]) {
      await waitFor(async () => (await c.list()).filter((r) => r.createdAt >= restarted).length === 2, 3000, 'listed');
    }
  });

  it('signaling between a host on A and a guest on B opens a WebRTC connection', async () => {
    const { a, b, ca, cb } = await twoNodes();
    const room = await ca.announce(announce({ endpoints: [{ kind: 'webrtc', peer: 'host' }] }));
    cleanups.push(() => room.close());
    const hostJoin = await ca.join(room.id);
    const listener = await listenWebRtcNode({
      signaling: { url: hostJoin.signaling?.url ?? '', room: room.id, peer: 'host' },
      channels,
      rtc: LOOPBACK_RTC,
    });
    cleanups.push(() => listener.close('done'));
    echo(listener);
    await waitFor(async () => (await cb.list()).some((r) => r.id === room.id), 2000, 'room on B');
    const info = await cb.join(room.id);
    expect(info.signaling?.url).toBe(`${b.url.replace('http', 'ws')}/signal`);
    // The guest's signaling socket is on B; the host's on A: every offer, answer and candidate crosses Redis.
    await waitFor(() => b.signaling !== undefined, 100);
    const guest = connectWebRtcNode({
      signaling: { url: info.signaling?.url ?? '', room: room.id, peer: 'guest-1' },
      to: info.signaling?.peer ?? '',
      channels,
      rtc: LOOPBACK_RTC,
    });
    cleanups.push(() => guest.close('done'));
    await opened(guest);
    expect(await roundTrip(guest, 20)).toEqual([...Array(20).keys()]);
    expect(a.signaling?.peersIn(room.id)).toEqual(['host']);
    expect(b.signaling?.peersIn(room.id)).toEqual([]); // the guest left B once its data channels opened
    const routed = (n: LobbyServer) =>
      (n.router as unknown as { stats: { forwarded: number; delivered: number } }).stats;
    expect(routed(b).forwarded).toBeGreaterThan(0);
    expect(routed(a).delivered).toBe(routed(b).forwarded);
    expect(routed(a).forwarded).toBeGreaterThan(0);
  });

  it('a relay session whose host is on A and client on B works', async () => {
    const { a, b, ca, cb } = await twoNodes();
    const room = await ca.announce(announce({ endpoints: [] }));
    cleanups.push(() => room.close());
    const local = await listen({ channels, port: 0, host: '127.0.0.1' });
    cleanups.push(() => local.close('done'));
    echo(local);
    const udpHost = await listenUdp({ channels, port: 0, host: '127.0.0.1' });
    cleanups.push(() => udpHost.close('done'));
    echo(udpHost);
    const reg = hostThroughRelay({
      relayUrl: a.url.replace('http', 'ws'),
      room: room.id,
      token: room.token,
      target: local.url,
      udpTarget: { host: '127.0.0.1', port: udpHost.port },
    });
    cleanups.push(() => reg.close());
    await reg.registered;
    const info = await waitFor(
      async () => {
        const j = await cb.join(room.id);
        return j.relay ? j : undefined;
      },
      2000,
      'relay in B’s join info',
    );
    expect(info.relay?.url).toBe(`${a.url.replace('http', 'ws')}/relay/join?room=${room.id}`);
    const client = connectNode(info.relay?.url ?? '', { channels });
    cleanups.push(() => client.close('done'));
    await opened(client);
    expect(await roundTrip(client, 50)).toEqual([...Array(50).keys()]);
    expect(a.relay?.roomStats(room.id)?.bytes).toBeGreaterThan(50 * 4);
    // UDP: B's join info names A's UDP room port; a transport-udp session runs through it.
    expect(info.relay?.udp).toMatch(/^udp:\/\/127\.0\.0\.1:\d+$/);
    expect(a.relay?.udpStats(room.id)).toBeDefined(); // the UDP port is A's
    expect(b.relay?.udpStats(room.id)).toBeUndefined();
    const udpUrl = new URL((info.relay?.udp ?? '').replace(/^udp:/, 'http:'));
    const udpClient = await connectUdp({ channels, host: udpUrl.hostname, port: Number(udpUrl.port) });
    cleanups.push(() => udpClient.close('done'));
    expect(await roundTrip(udpClient, 30)).toEqual([...Array(30).keys()]);
    expect(a.relay?.udpStats(room.id)?.toHost).toBeGreaterThan(1);
    // A client that knocks on B's relay is told where the room's relay is.
    const wrong = connectNode(`${b.url.replace('http', 'ws')}/relay/join?room=${room.id}`, { channels });
    const closed = await new Promise<{ code: string; reason: string }>((r) => wrong.on('close', (e) => r(e)));
    expect(closed.reason).toContain(`${a.url.replace('http', 'ws')}/relay/join`);
  });
});
