import { NetplayClient, NetplayHost, SESSION_CHANNELS } from '@netplay/session';
import { TestCore } from '@netplay/state/testing';
import { systemClock } from '@netplay/transport';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  NodeRTCPeerConnection,
  nodeRtc,
  type RtcConfiguration,
  type RtcPeerConnectionConstructor,
  type RtcStatsReportLike,
} from '../src/server.js';

/*
 * The session's wrong-password back-off over WebRTC, keyed by the connection's remote address:
 * real node-datachannel connections, a real signaling server and the unchanged NetplayHost; the
 * host's peer connections answer getStats with injected selected pairs, so guests appear to come
 * from two IPs although all of them run on the loopback.
 */

const CONTENT = { coreId: 'test-core', coreVersion: '1.0.0', contentHash: '00112233aabbccdd' };

/** A Chromium-shaped stats report whose selected pair's remote candidate is `ip:port`. */
function report(ip: string, port: number): RtcStatsReportLike {
  return new Map<string, Record<string, unknown>>([
    ['T', { id: 'T', type: 'transport', selectedCandidatePairId: 'P' }],
    ['P', { id: 'P', type: 'candidate-pair', remoteCandidateId: 'R', nominated: true, state: 'succeeded' }],
    ['R', { id: 'R', type: 'remote-candidate', address: ip, port, candidateType: 'srflx' }],
  ]);
}

/** node-datachannel's `RTCPeerConnection` whose `getStats()` gives the next report of `reports`. */
function injectedStats(reports: RtcStatsReportLike[]): RtcPeerConnectionConstructor {
  const Base = NodeRTCPeerConnection as unknown as new (config: RtcConfiguration) => object;
  class WithStats extends Base {
    private readonly report = reports.shift();
    getStats(): Promise<RtcStatsReportLike> {
      return this.report ? Promise.resolve(this.report) : Promise.reject(new Error('no report injected'));
    }
  }
  return WithStats as unknown as RtcPeerConnectionConstructor;
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('session admission over WebRTC keys guests by their address', () => {
  it('wrong passwords from one IP delay a guest from that IP, never a guest from another IP', async () => {
    const players = 4;
    const server = await listenSignaling({ rateLimits: false });
    cleanup.push(() => server.close());
    // Offers arrive one at a time (each guest finishes before the next starts): mallory, eve, alice.
    const reports = [report('198.51.100.7', 40_001), report('198.51.100.7', 40_002), report('203.0.113.9', 50_000)];
    const listener = await listenWebRtcNode({
      signaling: { url: server.url, room: 'pw', peer: 'host' },
      channels: SESSION_CHANNELS,
      rtc: { ...nodeRtc({ bindAddress: '127.0.0.1' }), RTCPeerConnection: injectedStats(reports) },
    });
    cleanup.push(() => listener.close());
    const host = new NetplayHost({
      core: new TestCore({ players, seed: 1 }),
      content: CONTENT,
      clock: systemClock,
      players,
      nick: 'host',
      password: 'pw',
      // No free failure, and a back-off far longer than the test.
      attempts: { freeFailures: 0, baseBackoffMs: 60_000, maxBackoffMs: 60_000 },
    });
    cleanup.push(() => host.close());
    host.listen(listener);

    const join = (nick: string, password: string): NetplayClient => {
      const conn = connectWebRtcNode({
        signaling: { url: server.url, room: 'pw', peer: nick },
        to: 'host',
        channels: SESSION_CHANNELS,
        rtc: LOOPBACK_RTC,
      });
      const client = new NetplayClient(conn, {
        core: new TestCore({ players, seed: 1 }),
        content: CONTENT,
        clock: systemClock,
        nick,
        password,
      });
      cleanup.push(() => client.close());
      return client;
    };
    const settled = (c: NetplayClient, nick: string) =>
      c.error !== undefined || host.peerList().some((p) => p.nick === nick && p.stage === 'playing');

    const mallory = join('mallory', 'guess');
    await until(() => settled(mallory, 'mallory'), 10_000, 'mallory');
    expect(mallory.error?.code).toBe('bad-password');

    // Same IP, right password: still inside mallory's back-off.
    const eve = join('eve', 'pw');
    await until(() => settled(eve, 'eve'), 10_000, 'eve');
    expect(eve.error?.code).toBe('too-many-attempts');

    // Another IP, right password: admitted at once (the host gives it a slot; the game waits for 4).
    const alice = join('alice', 'pw');
    await until(() => settled(alice, 'alice'), 10_000, 'alice');
    expect(alice.error).toBeUndefined();
    expect(host.peerList().find((p) => p.nick === 'alice')?.slot).toBe(1);

    const seen = new Map(host.peerList().map((p) => [p.nick, p.remoteAddress]));
    expect(seen.get('alice')).toBe('203.0.113.9:50000');
  });
});
