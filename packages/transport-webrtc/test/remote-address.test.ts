import { addressKey } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import {
  chooseRemoteAddress,
  connectWebRtcNode,
  isIpLiteral,
  listenSignaling,
  listenWebRtcNode,
  NodeRTCPeerConnection,
  nodeRtc,
  parseServerMessage,
  type RtcConfiguration,
  type RtcPeerConnectionConstructor,
  type RtcStatsReportLike,
  type SignalingServer,
  selectedRemoteCandidate,
  type WebRtcConnection,
  type WebRtcListener,
} from '../src/server.js';
import { RawClient } from './raw-client.js';

const CHANNELS = [{ name: 'control', kind: 'reliable' }] as const;
const LOOPBACK = { bindAddress: '127.0.0.1' };

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A W3C stats report whose selected pair's remote candidate is `remote` (Chromium's shape). */
function chromiumReport(remote: Record<string, unknown>): RtcStatsReportLike {
  return new Map<string, Record<string, unknown>>([
    ['T1', { id: 'T1', type: 'transport', selectedCandidatePairId: 'CP2' }],
    // A pair that is not the selected one, from another address: must be ignored.
    ['CP1', { id: 'CP1', type: 'candidate-pair', remoteCandidateId: 'R1', nominated: true, state: 'succeeded' }],
    ['CP2', { id: 'CP2', type: 'candidate-pair', remoteCandidateId: 'R2', nominated: true, state: 'succeeded' }],
    ['R1', { id: 'R1', type: 'remote-candidate', address: '192.0.2.250', port: 9, candidateType: 'host' }],
    ['R2', { id: 'R2', type: 'remote-candidate', ...remote }],
  ]);
}

/** Firefox's shape: no transport entry, `selected: true` on the pair, `ip` rather than `address`. */
function firefoxReport(ip: string, port: number): RtcStatsReportLike {
  return new Map<string, Record<string, unknown>>([
    ['p0', { id: 'p0', type: 'candidate-pair', remoteCandidateId: 'r0', nominated: true, state: 'failed' }],
    ['p1', { id: 'p1', type: 'candidate-pair', remoteCandidateId: 'r1', selected: true, state: 'succeeded' }],
    ['r0', { id: 'r0', type: 'remote-candidate', ip: '192.0.2.251', port: 1, candidateType: 'host' }],
    ['r1', { id: 'r1', type: 'remote-candidate', ip, port, candidateType: 'srflx' }],
  ]);
}

/**
 * node-datachannel's `RTCPeerConnection` whose `getStats()` answers with the next injected report
 * (one per peer connection made, in order): real ICE, DTLS and SCTP, an injected selected pair.
 */
function injectedStats(reports: RtcStatsReportLike[], delayMs = 0): RtcPeerConnectionConstructor {
  const Base = NodeRTCPeerConnection as unknown as new (config: RtcConfiguration) => object;
  class WithStats extends Base {
    private readonly report = reports.shift();
    getStats(): Promise<RtcStatsReportLike> {
      const { report } = this;
      return new Promise((resolve, reject) =>
        setTimeout(() => (report ? resolve(report) : reject(new Error('no report injected'))), delayMs),
      );
    }
  }
  return WithStats as unknown as RtcPeerConnectionConstructor;
}

async function host(
  room: string,
  ctor = NodeRTCPeerConnection,
): Promise<{ server: SignalingServer; listener: WebRtcListener; accepted: WebRtcConnection[]; seen: string[] }> {
  const server = await listenSignaling();
  cleanup.push(() => server.close());
  const listener = await listenWebRtcNode({
    signaling: { url: server.url, room, peer: 'host' },
    channels: CHANNELS,
    rtc: { ...nodeRtc(LOOPBACK), RTCPeerConnection: ctor },
  });
  cleanup.push(() => listener.close());
  const accepted: WebRtcConnection[] = [];
  const seen: string[] = [];
  listener.on('connection', (c) => {
    accepted.push(c as WebRtcConnection);
    seen.push(c.remoteAddress); // what a session reads at this very event
  });
  return { server, listener, accepted, seen };
}

function guest(server: SignalingServer, room: string, peer: string, ctor = NodeRTCPeerConnection): WebRtcConnection {
  const conn = connectWebRtcNode({
    signaling: { url: server.url, room, peer },
    to: 'host',
    channels: CHANNELS,
    rtc: { ...nodeRtc(LOOPBACK), RTCPeerConnection: ctor },
  });
  cleanup.push(() => conn.close());
  return conn;
}

describe('remoteAddress of WebRTC connections (real node-datachannel)', () => {
  it('two guests from the loopback: 127.0.0.1:port each, final at `connection`, one addressKey', async () => {
    const { server, accepted, seen } = await host('loop');
    // The second guest forges a name that looks like another address: the name plays no part.
    const guests = [guest(server, 'loop', 'g1'), guest(server, 'loop', '10.9.8.7')];
    expect(await pollUntil(() => accepted.length === 2 && guests.every((g) => g.state === 'open'), 10_000)).toBe(true);
    expect(seen).toHaveLength(2);
    for (const a of seen) expect(a).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(accepted.map((c) => c.remoteAddress)).toEqual(seen);
    expect(accepted.map((c) => c.remoteAddressSource)).toEqual(['ice', 'ice']);
    expect(new Set(seen.map(addressKey))).toEqual(new Set(['127.0.0.1']));
    // Two peer connections: two ports.
    expect(new Set(seen).size).toBe(2);
    // The guests see the host the same way.
    for (const g of guests) {
      expect(g.remoteAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(g.remoteAddressSource).toBe('ice');
    }
  });

  it('injected selected pairs from two IPs give two keys; the peer names do not matter', async () => {
    const reports = [
      chromiumReport({ address: '198.51.100.7', port: 40_000, candidateType: 'srflx' }),
      firefoxReport('2001:db8::7', 50_000),
    ];
    const { server, accepted, seen } = await host('two-ips', injectedStats(reports));
    const a = guest(server, 'two-ips', 'same-name-a');
    expect(await pollUntil(() => accepted.length === 1 && a.state === 'open', 10_000)).toBe(true);
    const b = guest(server, 'two-ips', '198.51.100.7');
    expect(await pollUntil(() => accepted.length === 2 && b.state === 'open', 10_000)).toBe(true);
    expect(seen).toEqual(['198.51.100.7:40000', '[2001:db8::7]:50000']);
    expect(seen.map(addressKey)).toEqual(['198.51.100.7', '2001:db8::7']);
  });

  it('the handshake waits for the stats: a getStats slower than HELLO still gives the address at `connection`', async () => {
    const reports = [chromiumReport({ address: '198.51.100.8', port: 7, candidateType: 'host' })];
    const { server, accepted, seen } = await host('slow', injectedStats(reports, 400));
    const g = guest(server, 'slow', 'g');
    expect(await pollUntil(() => accepted.length === 1 && g.state === 'open', 10_000)).toBe(true);
    expect(seen).toEqual(['198.51.100.8:7']);
  });

  it('an mDNS candidate falls back to the IP the signaling server stamped on the offer', async () => {
    const reports = [chromiumReport({ address: '4f1c2a7e-0b7d-4e1a-9d55-3a2b1c0d9e8f.local', port: 5000 })];
    const { server, listener, accepted, seen } = await host('mdns', injectedStats(reports));
    const stamps: (string | undefined)[] = [];
    listener.signaling.on('signal', (s) => stamps.push(s.address));
    guest(server, 'mdns', 'g');
    expect(await pollUntil(() => accepted.length === 1, 10_000)).toBe(true);
    expect(stamps[0]).toBe('127.0.0.1');
    expect(seen).toEqual(['127.0.0.1']);
    expect(accepted[0]!.remoteAddressSource).toBe('signaling');
  });

  it('the guest side too: an mDNS host candidate gives the stamp on the answer', async () => {
    const { server, accepted } = await host('mdns-guest');
    const g = guest(server, 'mdns-guest', 'g', injectedStats([chromiumReport({ address: 'x.local', port: 1 })]));
    expect(await pollUntil(() => accepted.length === 1 && g.state === 'open', 10_000)).toBe(true);
    expect([g.remoteAddress, g.remoteAddressSource]).toEqual(['127.0.0.1', 'signaling']);
  });

  it('no stats at all (getStats rejects): the stamped IP, never the name', async () => {
    const { server, accepted, seen } = await host('nostats', injectedStats([]));
    guest(server, 'nostats', 'evil');
    expect(await pollUntil(() => accepted.length === 1, 10_000)).toBe(true);
    expect(seen).toEqual(['127.0.0.1']);
    expect(addressKey(seen[0]!)).toBe('127.0.0.1');
  });

  it('the server stamps its own view of the sender; an address a peer puts in its message is dropped', async () => {
    const server = await listenSignaling();
    cleanup.push(() => server.close());
    const hostSock = await RawClient.open(server.url);
    cleanup.push(() => hostSock.ws.close());
    const evil = await RawClient.open(server.url);
    cleanup.push(() => evil.ws.close());
    hostSock.ws.send(JSON.stringify({ v: 1, type: 'join', room: 'r', peer: 'host' }));
    expect(await pollUntil(() => hostSock.messages.some((m) => m.type === 'joined'), 5000)).toBe(true);
    evil.ws.send(JSON.stringify({ v: 1, type: 'join', room: 'r', peer: '203.0.113.66' }));
    expect(await pollUntil(() => evil.messages.some((m) => m.type === 'joined'), 5000)).toBe(true);
    evil.ws.send(
      JSON.stringify({
        v: 1,
        type: 'signal',
        to: 'host',
        address: '203.0.113.66',
        signal: { kind: 'offer', sdp: 'v=0', address: '203.0.113.66' },
      }),
    );
    expect(await pollUntil(() => hostSock.messages.some((m) => m.type === 'signal'), 5000)).toBe(true);
    const sig = hostSock.messages.find((m) => m.type === 'signal');
    expect(sig).toEqual({
      v: 1,
      type: 'signal',
      from: '203.0.113.66',
      signal: { kind: 'offer', sdp: 'v=0' },
      address: '127.0.0.1',
    });
    expect(hostSock.invalid).toEqual([]);
  });
});

describe('the rule (pure)', () => {
  const FALLBACK = 'webrtc:guest';

  it('reads the selected pair in Chromium, Firefox and node-datachannel shapes, not another pair', () => {
    expect(
      selectedRemoteCandidate(chromiumReport({ address: '198.51.100.7', port: 1, candidateType: 'host' })),
    ).toEqual({ address: '198.51.100.7', port: 1, candidateType: 'host' });
    expect(selectedRemoteCandidate(firefoxReport('203.0.113.5', 2))).toEqual({
      address: '203.0.113.5',
      port: 2,
      candidateType: 'srflx',
    });
    expect(selectedRemoteCandidate(new Map())).toBeUndefined();
    // A redacted address (Chromium hides some remote addresses): no address, not a wrong one.
    expect(selectedRemoteCandidate(chromiumReport({ address: '', port: 3, candidateType: 'prflx' }))?.address).toBe(
      undefined,
    );
  });

  it('a non-relay IP candidate wins over the signaling stamp', () => {
    expect(
      chooseRemoteAddress({ address: '198.51.100.7', port: 9, candidateType: 'srflx' }, '10.0.0.1', FALLBACK),
    ).toEqual({
      address: '198.51.100.7:9',
      source: 'ice',
    });
    expect(
      chooseRemoteAddress({ address: '::FFFF:10.1.2.3', port: 9, candidateType: 'host' }, undefined, FALLBACK),
    ).toEqual({
      address: '[::ffff:10.1.2.3]:9',
      source: 'ice',
    });
    expect(addressKey('[::ffff:10.1.2.3]:9')).toBe('10.1.2.3');
  });

  it('relay and mDNS candidates fall back to the stamp; without one a relay as is, else the shared webrtc key', () => {
    const relay = { address: '192.0.2.10', port: 3478, candidateType: 'relay' };
    const mdns = { address: 'abc.local', port: 5000, candidateType: 'host' };
    expect(chooseRemoteAddress(relay, '203.0.113.1', FALLBACK)).toEqual({
      address: '203.0.113.1',
      source: 'signaling',
    });
    expect(chooseRemoteAddress(mdns, '2001:db8::1', FALLBACK)).toEqual({ address: '2001:db8::1', source: 'signaling' });
    expect(addressKey('2001:db8::1')).toBe('2001:db8::1');
    expect(chooseRemoteAddress(relay, undefined, FALLBACK)).toEqual({ address: '192.0.2.10:3478', source: 'relay' });
    expect(chooseRemoteAddress(mdns, undefined, FALLBACK)).toEqual({ address: FALLBACK, source: 'unknown' });
    expect(chooseRemoteAddress(undefined, 'not-an-ip', FALLBACK)).toEqual({ address: FALLBACK, source: 'unknown' });
  });

  it('a forged peer name cannot change the key: every name falls into the one `webrtc` bucket', () => {
    for (const name of ['1.2.3.4', 'guest', '::1', '10.0.0.1.local', '[::1]', '-']) {
      const { address } = chooseRemoteAddress(undefined, undefined, `webrtc:${name}`);
      // Names are [A-Za-z0-9._~-]: no colon, so `webrtc:<name>` always reduces to `webrtc`.
      if (!name.includes(':') && !name.includes('[')) expect(addressKey(address)).toBe('webrtc');
    }
    // With a candidate, the name is not used at all.
    const a = chooseRemoteAddress(
      { address: '198.51.100.7', port: 1, candidateType: 'host' },
      undefined,
      'webrtc:1.2.3.4',
    );
    expect(addressKey(a.address)).toBe('198.51.100.7');
  });

  it('isIpLiteral and the stamp parser accept IPs only', () => {
    for (const ip of ['127.0.0.1', '0.0.0.0', '::1', '2001:db8::7', '::ffff:10.0.0.1', 'fe80::1%eth0']) {
      expect(isIpLiteral(ip)).toBe(true);
    }
    for (const s of [
      '',
      'host',
      'abc.local',
      '256.1.1.1',
      '1.2.3',
      '1:2',
      ':',
      '1.2.3.4:5',
      'g::1',
      '::ffff:999.0.0.1',
    ]) {
      expect(isIpLiteral(s), s).toBe(false);
    }
    const msg = (address: unknown) =>
      JSON.stringify({ v: 1, type: 'signal', from: 'a', signal: { kind: 'offer', sdp: 'x' }, address });
    expect(parseServerMessage(msg('10.0.0.1'))).toMatchObject({ address: '10.0.0.1' });
    expect(() => parseServerMessage(msg('evil.local'))).toThrow(/address/);
    expect(() => parseServerMessage(msg(7))).toThrow(/address/);
  });
});
