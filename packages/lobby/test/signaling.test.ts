import type { Connection } from '@netplay/transport';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  type PeerSignal,
  SignalingClient,
  type SignalingRouter,
  type SignalingServer,
} from '@netplay/transport-webrtc/server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LobbyClient, startLobby } from '../src/node.js';
import { announce, waitFor } from './helpers.js';

const WS = WebSocket as unknown as NonNullable<Parameters<typeof SignalingClient.join>[0]['WebSocket']>;
const channels = [{ name: 'input', kind: 'reliable' }] as const;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function opened(conn: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    conn.on('open', () => resolve());
    conn.on('close', ({ code, reason }) => reject(new Error(`closed ${code} ${reason}`)));
  });
}

/** Two signaling servers joined by an in-process router: the transport-webrtc hook alone, without Redis. */
function linkServers(): {
  routers: [SignalingRouter, SignalingRouter];
  attach(a: SignalingServer, b: SignalingServer): void;
} {
  const peers: [Map<string, Set<string>>, Map<string, Set<string>>] = [new Map(), new Map()];
  const servers: SignalingServer[] = [];
  const make = (me: 0 | 1): SignalingRouter => {
    const other = (1 - me) as 0 | 1;
    return {
      remotePeers: (room) => [...(peers[other].get(room) ?? [])],
      joined(room, peer) {
        const s = peers[me].get(room) ?? new Set<string>();
        peers[me].set(room, s);
        s.add(peer);
        servers[other]?.remoteJoined(room, peer);
      },
      left(room, peer) {
        peers[me].get(room)?.delete(peer);
        servers[other]?.remoteLeft(room, peer);
      },
      forward(room, from, to, signal: PeerSignal) {
        queueMicrotask(() => servers[other]?.deliver(room, from, to, signal));
      },
    };
  };
  return {
    routers: [make(0), make(1)],
    attach(a, b) {
      servers.push(a, b);
    },
  };
}

describe('signaling through the lobby', () => {
  it('one node: /signal is transport-webrtc’s server; a room with a webrtc endpoint connects', async () => {
    const lobby = await startLobby({ api: { rateLimits: false } });
    cleanups.push(() => lobby.close());
    const client = new LobbyClient(lobby.url);
    const room = await client.announce(announce({ endpoints: [{ kind: 'webrtc', peer: 'the-host' }] }));
    cleanups.push(() => room.close());
    const info = await client.join(room.id);
    expect(info.signaling).toEqual({ url: lobby.signalingUrl, room: room.id, peer: 'the-host' });
    const listener = await listenWebRtcNode({
      signaling: { url: info.signaling?.url ?? '', room: room.id, peer: 'the-host' },
      channels,
      rtc: LOOPBACK_RTC,
    });
    cleanups.push(() => listener.close('done'));
    listener.on('connection', (c) => c.on('message', ({ data }) => c.send('input', data)));
    const guest = connectWebRtcNode({
      signaling: { ...info.signaling!, peer: 'g' },
      to: 'the-host',
      channels,
      rtc: LOOPBACK_RTC,
    });
    cleanups.push(() => guest.close('done'));
    await opened(guest);
    const got: number[] = [];
    guest.on('message', ({ data }) => got.push(data[0] as number));
    guest.send('input', new Uint8Array([42]));
    await waitFor(() => got.length === 1, 5000, 'echo');
    expect(got).toEqual([42]);
  });

  it('the router hook: remote peers are listed, named, counted and reached', async () => {
    const link = linkServers();
    const a = await listenSignaling({ router: link.routers[0] });
    const b = await listenSignaling({ router: link.routers[1], maxPeersPerRoom: 3 });
    link.attach(a, b);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const host = await SignalingClient.join({ url: a.url, room: 'r', peer: 'host', WebSocket: WS });
    cleanups.push(() => host.close());
    const joinedEvents: string[] = [];
    host.on('peer-joined', (p: string) => joinedEvents.push(`+${p}`));
    host.on('peer-left', (p: string) => joinedEvents.push(`-${p}`));
    const guest = await SignalingClient.join({ url: b.url, room: 'r', peer: 'guest', WebSocket: WS });
    expect(guest.peers).toEqual(['host']); // the remote peer is in `joined`
    await waitFor(() => joinedEvents.length === 1, 2000, 'peer-joined across servers');
    // A name taken on the other server is refused here.
    await expect(SignalingClient.join({ url: b.url, room: 'r', peer: 'host', WebSocket: WS })).rejects.toThrow(/taken/);
    // The room is full counting remote peers (3 = host on A + guest + g2 on B).
    const g2 = await SignalingClient.join({ url: b.url, room: 'r', peer: 'g2', WebSocket: WS });
    await expect(SignalingClient.join({ url: b.url, room: 'r', peer: 'g3', WebSocket: WS })).rejects.toThrow(/full/);
    const got: { from: string; signal: PeerSignal }[] = [];
    host.on('signal', (e) => got.push(e));
    guest.send('host', {
      kind: 'candidate',
      candidate: 'candidate:1 1 udp 1 127.0.0.1 9 typ host',
      sdpMid: '0',
      sdpMLineIndex: 0,
    });
    await waitFor(() => got.length === 1, 2000, 'signal across servers');
    expect(got[0]?.from).toBe('guest');
    g2.close();
    guest.close();
    await waitFor(() => joinedEvents.length === 4, 2000, 'peer-left across servers');
    expect(joinedEvents.sort()).toEqual(['+g2', '+guest', '-g2', '-guest'].sort());
  });
});
