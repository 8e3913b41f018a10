import { type LinkOptions, type NetplayClient, type NetplayHost, SESSION_CHANNELS } from '@netplay/session';
import type { Connection } from '@netplay/transport';
import { afterEach, describe, expect, it } from 'vitest';
import { connectWebRtcNode, LOOPBACK_RTC, listenWebRtcNode } from '../src/server.js';
import {
  closeWebRtcSessions,
  generated,
  joinWebRtcHost,
  play,
  rollbackFinals,
  startWebRtcHost,
  until,
  type WebRtcSessionEnv,
} from './webrtc-session-env.js';

/*
 * Issue 17's full mesh for rollback P2P over WebRTC: @netplay/session's direct links between the
 * players, made through the same signaling server and room as the session (each client listens
 * under a second peer name, the others dial it). Real node-datachannel connections, real time.
 * Every client-to-client message goes over a direct data channel: the host's relay channels carry
 * 0 bytes. Then the host leaves and the two clients play on under the new host. The set-up is
 * webrtc-session-env.ts.
 */

const RELAY = new Set(['np-relay', 'np-relay-u']);

afterEach(closeWebRtcSessions);

/** A client's direct links in the env's room: it listens as `NICK-link`, dials under fresh names; bytes counted. */
function webrtcLinks(env: WebRtcSessionEnv, nick: string, bytes: { n: number }): LinkOptions {
  const { server, room } = env;
  let dials = 0;
  const count = (c: Connection) => {
    c.on('message', ({ data }) => {
      bytes.n += data.length;
    });
    return c;
  };
  return {
    listen: async () => {
      const listener = await listenWebRtcNode({
        signaling: { url: server.url, room, peer: `${nick}-link` },
        channels: SESSION_CHANNELS,
        rtc: LOOPBACK_RTC,
      });
      listener.on('connection', count);
      env.closers.push(() => listener.close('test over'));
      return { listener, address: `${nick}-link` };
    },
    connect: (address) =>
      count(
        connectWebRtcNode({
          signaling: { url: server.url, room, peer: `${nick}-dial-${dials++}` },
          to: address,
          channels: SESSION_CHANNELS,
          rtc: LOOPBACK_RTC,
        }),
      ),
  };
}

describe('rollback full mesh over WebRTC (node-datachannel, one signaling server)', () => {
  it('3 players: client-to-client messages go direct (the host relays 0 bytes); the host leaves, the two play on', async () => {
    const players = 3;
    const env = await startWebRtcHost(players, { links: { timeoutMs: 10_000 } }, 'mesh');
    const relayed = { n: 0 };
    env.listener.on('connection', (c) =>
      c.on('message', ({ channel, data }) => {
        if (RELAY.has(channel)) relayed.n += data.length;
      }),
    );
    const { host } = env;
    const direct = { n: 0 };
    const clients = ['alice', 'bob'].map((nick) =>
      joinWebRtcHost(env, nick, players, { links: webrtcLinks(env, nick, direct) }),
    );
    const [a, b] = clients as [NetplayClient, NetplayClient];
    await until(() => clients.every((c) => c.state !== 'handshaking'), 20_000, 'the handshakes and links');
    expect(clients.map((c) => c.state)).toEqual(['playing', 'playing']);

    const peers: Array<NetplayHost | NetplayClient> = [host, a, b];
    const fs = peers.map(rollbackFinals);
    let hostAlive = true;
    const tick = () => {
      if (hostAlive) host.tick(generated(0, host.frame));
      for (const c of clients) {
        const s = c.rollback;
        if (c.state === 'playing' && s !== undefined) c.tick(generated(s.localPlayer, s.currentFrame));
      }
      fs.forEach((f, i) => {
        if (i > 0 || hostAlive) f.record();
      });
    };
    await play(tick, () => fs.every((f) => f.hashes.has(240)), 30_000);
    // The game ran its 240 frames with client-to-client traffic, all of it on the direct channels.
    expect(direct.n).toBeGreaterThan(1000);
    expect(relayed.n).toBe(0);

    const changed: string[] = [];
    for (const c of clients) c.on('host-changed', ({ nick }) => changed.push(nick));
    const at = Math.max(a.frame ?? 0, b.frame ?? 0);
    hostAlive = false;
    host.close();
    await play(tick, () => [a, b].every((c) => (c.rollback?.confirmedFrame ?? 0) > at + 180), 30_000);
    expect(changed).toHaveLength(2);
    expect(new Set(changed).size).toBe(1);
    expect([a.state, b.state]).toEqual(['playing', 'playing']);
    let compared = 0;
    for (let i = 0; i < fs.length; i++)
      for (let j = i + 1; j < fs.length; j++)
        for (const [f, h] of fs[i]!.hashes) {
          const o = fs[j]!.hashes.get(f);
          if (o === undefined) continue;
          compared++;
          expect(o, `frame ${f}`).toBe(h);
        }
    expect(compared).toBeGreaterThan(600);
  }, 60_000);
});
