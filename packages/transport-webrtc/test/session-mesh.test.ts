import { type LinkOptions, NetplayClient, NetplayHost, SESSION_CHANNELS } from '@netplay/session';
import { hash64 } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { type Connection, systemClock } from '@netplay/transport';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  type SignalingServer,
  type WebRtcListener,
} from '../src/server.js';

/*
 * Issue 17's full mesh for rollback P2P over WebRTC: @netplay/session's direct links between the
 * players, made through the same signaling server and room as the session (each client listens
 * under a second peer name, the others dial it). Real node-datachannel connections, real time.
 * Every client-to-client message goes over a direct data channel: the host's relay channels carry
 * 0 bytes. Then the host leaves and the two clients play on under the new host.
 */

const CONTENT = { coreId: 'test-core', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };
const FRAME_MS = 1000 / 60;
const RELAY = new Set(['np-relay', 'np-relay-u']);

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function input(slot: number, frame: number): Uint8Array {
  const x = Math.imul(Math.floor(frame / 5) + 0x51ed27, 0x9e3779b1) ^ Math.imul(slot + 1, 0x85ebca6b);
  return new Uint8Array([slot + 1, (x >>> 13) & 0xff]);
}

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Ticks at 60 Hz (wall clock, catching up at most 4 frames) until `done()` or `timeoutMs`. */
async function play(tick: () => void, done: () => boolean, timeoutMs: number): Promise<void> {
  const start = performance.now();
  let ran = 0;
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      const now = performance.now();
      const due = Math.min(Math.floor((now - start) / FRAME_MS), ran + 4);
      while (ran < due) {
        ran++;
        tick();
      }
      if (done()) {
        clearInterval(timer);
        resolve();
      } else if (now - start > timeoutMs) {
        clearInterval(timer);
        reject(new Error(`not done within ${timeoutMs} ms`));
      }
    }, FRAME_MS / 2);
  });
}

/** hash64 of every final frame's state of a rollback player. */
function finals(peer: NetplayHost | NetplayClient) {
  const hashes = new Map<number, bigint>();
  let checked = -1;
  return {
    hashes,
    record() {
      const d = peer.driver;
      const s = peer.rollback;
      if (d === undefined || s === undefined) return;
      const upTo = Math.min(s.confirmedFrame, s.currentFrame);
      for (let f = Math.max(checked + 1, upTo - 16); f <= upTo; f++) {
        const st = d.stateOf(f);
        if (st !== undefined) hashes.set(f, hash64(st));
      }
      checked = Math.max(checked, upTo);
    },
  };
}

/** A client's direct links in `room`: it listens as `NICK-link`, dials under fresh names; bytes counted. */
function webrtcLinks(server: SignalingServer, room: string, nick: string, bytes: { n: number }): LinkOptions {
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
      cleanup.push(() => listener.close('test over'));
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
    const server = await listenSignaling({ rateLimits: false });
    cleanup.push(() => server.close());
    const room = `mesh-${process.pid}`;
    const listener: WebRtcListener = await listenWebRtcNode({
      signaling: { url: server.url, room, peer: 'host' },
      channels: SESSION_CHANNELS,
      rtc: LOOPBACK_RTC,
    });
    cleanup.push(() => listener.close('test over'));
    const relayed = { n: 0 };
    listener.on('connection', (c) =>
      c.on('message', ({ channel, data }) => {
        if (RELAY.has(channel)) relayed.n += data.length;
      }),
    );
    const host = new NetplayHost({
      core: new TestCore({ players, seed: 7 }),
      content: CONTENT,
      clock: systemClock,
      players,
      nick: 'host',
      links: { timeoutMs: 10_000 },
    });
    host.listen(listener);
    cleanup.push(() => host.close());
    const direct = { n: 0 };
    const clients = ['alice', 'bob'].map((nick) => {
      const c = new NetplayClient(
        connectWebRtcNode({
          signaling: { url: server.url, room, peer: nick },
          to: 'host',
          channels: SESSION_CHANNELS,
          rtc: LOOPBACK_RTC,
        }),
        {
          core: new TestCore({ players, seed: 7 }),
          content: CONTENT,
          clock: systemClock,
          nick,
          links: webrtcLinks(server, room, nick, direct),
        },
      );
      cleanup.push(() => c.close());
      return c;
    });
    const [a, b] = clients as [NetplayClient, NetplayClient];
    await until(() => clients.every((c) => c.state !== 'handshaking'), 20_000, 'the handshakes and links');
    expect(clients.map((c) => c.state)).toEqual(['playing', 'playing']);

    const peers: Array<NetplayHost | NetplayClient> = [host, a, b];
    const fs = peers.map(finals);
    let hostAlive = true;
    const tick = () => {
      if (hostAlive) host.tick(input(0, host.frame));
      for (const c of clients) {
        const s = c.rollback;
        if (c.state === 'playing' && s !== undefined) c.tick(input(s.localPlayer, s.currentFrame));
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
