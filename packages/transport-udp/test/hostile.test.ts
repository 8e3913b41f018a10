/**
 * Hostile peers on the simulated network (issue 13, findings 3, 5 and 6 for UDP): a flooding peer
 * is closed with `flood` while another keeps exchanging messages; connections announcing maximal
 * messages hold what they sent (plus a fixed overhead), not what they announced, and a listener's
 * reassembly stays under its cap; sessions that pass the cookie handshake but are never heard on
 * are capped per address and in total and expire; `maxConnectionsPerAddress` refuses the rest.
 */
import { type ChannelSpec, type CloseEvent, DEFAULT_RATE_LIMITS } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { fragmentSize, resolveConfig } from '../src/config.js';
import type { UdpPeer } from '../src/peer.js';
import { FRAGMENT_OVERHEAD, MESSAGE_OVERHEAD } from '../src/reassembly.js';
import { encodeDataPacket, encodeFragmentFrame } from '../src/wire.js';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

/** A DATA datagram from `client` carrying fragment `idx` of message `msgSeq` (announced `msgLen`). */
function fragment(client: UdpPeer, packetSeq: number, msgSeq: number, msgLen: number, idx: number): Uint8Array {
  const frag = fragmentSize(resolveConfig());
  const frame = encodeFragmentFrame(1, msgSeq, msgLen, idx, frag, new Uint8Array(Math.min(frag, msgLen - idx * frag))); // 'bulk'
  return encodeDataPacket(client.session, frame, { seq: packetSeq });
}

describe('flood: a peer over its rate budget', () => {
  it('sending 1.9 M messages in 10 s is closed with flood within 100 ms; another peer is not slowed', () => {
    const sim = new SimUdp(channels, { seed: 21, link: { latencyMs: 5 } });
    const flooder = sim.pair('flooder');
    const honest = sim.pair('honest');
    let serverClose: CloseEvent | undefined;
    let clientClose: CloseEvent | undefined;
    flooder.server.on('close', (e) => {
      serverClose = e;
    });
    flooder.client.on('close', (e) => {
      clientClose = e;
    });
    let floodDelivered = 0;
    flooder.server.on('message', () => floodDelivered++);
    // The honest peer echoes through the server every 16 ms; each round trip is timed.
    honest.server.on('message', (m) => honest.server.send(m.channel, m.data));
    const rtts: number[] = [];
    const sentAt = new Map<number, number>();
    honest.client.on('message', (m) => {
      const k = m.data[0]! | (m.data[1]! << 8);
      rtts.push(sim.net.now() - sentAt.get(k)!);
    });
    const start = sim.net.now();
    let floodSent = 0;
    let closedAt = -1;
    const msg = new Uint8Array(32);
    // 190 messages per ms of virtual time: 1.9 M in 10 s (40 bytes each on the wire: 7.6 MB/s).
    for (let ms = 0; ms < 10_000; ms++) {
      if (ms % 16 === 0) {
        const k = ms / 16;
        sentAt.set(k, sim.net.now());
        honest.client.send('input', new Uint8Array([k & 0xff, k >> 8, 0, 0]));
      }
      for (let i = 0; i < 190 && flooder.client.state === 'open'; i++) {
        flooder.client.send('input', msg);
        floodSent++;
      }
      sim.net.advance(1);
      if (closedAt < 0 && serverClose) closedAt = sim.net.now() - start;
      if (closedAt >= 0 && ms > closedAt + 2000) break; // the honest peer keeps going for 2 s after
    }
    expect(serverClose?.code).toBe('error');
    expect(serverClose?.error?.code).toBe('flood');
    expect(serverClose?.reason.startsWith('flood')).toBe(true);
    expect(clientClose?.code).toBe('remote');
    expect(clientClose?.reason.startsWith('flood')).toBe(true);
    // The default budget holds 8,000 units (2 s at 4,000/s): at 190 messages a ms it is spent in
    // about 45 ms, then the server's Close takes one link latency to arrive.
    expect(closedAt).toBeGreaterThan(0);
    expect(closedAt).toBeLessThan(100);
    expect(floodDelivered).toBeLessThanOrEqual(DEFAULT_RATE_LIMITS.messagesPerSecond * 2);
    expect(floodSent).toBeLessThan(30_000);
    // The honest peer: open, every echo back, and no round trip slower than 4 link latencies.
    expect(honest.server.state).toBe('open');
    expect(honest.client.state).toBe('open');
    expect(rtts.length).toBeGreaterThan((closedAt + 1900) / 16);
    expect(Math.max(...rtts)).toBeLessThan(20);
  });

  it('with rateLimits: false nothing is closed', () => {
    const config = { rateLimits: false as const };
    const sim = new SimUdp(channels, { seed: 22, config });
    const { client, server } = sim.pair('fast', config);
    let got = 0;
    server.on('message', () => got++);
    for (let ms = 0; ms < 200; ms++) {
      for (let i = 0; i < 190; i++) client.send('input', new Uint8Array(32));
      sim.net.advance(1);
    }
    sim.net.advance(1000);
    expect(server.state).toBe('open');
    expect(got).toBe(200 * 190);
  });
});

describe('memory: reassembly is charged by what was received', () => {
  it('64 connections each announcing a maximal message hold about one fragment each, not 4 MiB', () => {
    const sim = new SimUdp(channels, { seed: 23 });
    const max = resolveConfig().maxMessageBytes;
    const peers: UdpPeer[] = [];
    for (let i = 0; i < 64; i++) peers.push(sim.pair(`h${i}`).client);
    expect(sim.server.connections.length).toBe(64);
    // Each announces 4 messages of maxMessageBytes and sends the first fragment of each (about
    // 290 KB in all: the 135 KB reserved 780 MiB before).
    for (let i = 0; i < 64; i++) {
      for (let m = 0; m < 4; m++) sim.server.input(fragment(peers[i]!, 1000 + m, 1 + m, max, 0), `h${i}`);
    }
    const frag = fragmentSize(resolveConfig());
    const perPeer = 4 * (frag + FRAGMENT_OVERHEAD + MESSAGE_OVERHEAD);
    expect(sim.server.reassembly.held).toBe(64 * perPeer);
    expect(sim.server.reassembly.held).toBeLessThan(1 << 20); // before: 64 × 4 × 4 MiB announced
    for (const c of sim.server.connections) expect((c as UdpPeer).counters.reassemblyBytes).toBe(perPeer);
    expect(sim.server.connections.length).toBe(64);
  });

  it('a listener holds at most maxListenerReassemblyBytes; stalled announcements go first, an honest transfer completes', () => {
    const cap = 8 << 20;
    const sim = new SimUdp(channels, { seed: 24, server: { maxListenerReassemblyBytes: cap } });
    const max = resolveConfig().maxMessageBytes;
    const hostile: UdpPeer[] = [];
    for (let i = 0; i < 16; i++) hostile.push(sim.pair(`h${i}`).client);
    const honest = sim.pair('honest');
    const closes: CloseEvent[] = [];
    for (const c of sim.server.connections) if (c !== honest.server) c.on('close', (e) => closes.push(e));
    let peak = 0;
    // Each hostile connection sends 1 MiB of a maximal message it never finishes (16 MiB in all).
    const frag = fragmentSize(resolveConfig());
    const frags = Math.ceil((1 << 20) / frag);
    for (let f = 0; f < frags; f++) {
      for (let i = 0; i < hostile.length; i++) {
        sim.server.input(fragment(hostile[i]!, 1000 + f, 1, max, f), `h${i}`);
        peak = Math.max(peak, sim.server.reassembly.held);
      }
    }
    expect(peak).toBeLessThanOrEqual(cap);
    expect(closes.length).toBeGreaterThan(0);
    for (const e of closes) expect(e.error?.code).toBe('limit');
    // The honest peer moves a 2 MiB savestate meanwhile (started after them, it is never the oldest).
    let got: Uint8Array | undefined;
    honest.server.on('message', (m) => {
      got = m.data;
    });
    const state = new Uint8Array(2 << 20);
    for (let i = 0; i < state.length; i++) state[i] = i * 7;
    honest.client.send('bulk', state);
    sim.net.runUntil(() => got !== undefined, 20_000);
    expect(got && Buffer.from(got).equals(Buffer.from(state))).toBe(true);
    expect(honest.server.state).toBe('open');
    expect(sim.server.reassembly.held).toBeLessThanOrEqual(cap);
  });
});

describe('admission: sessions accepted but never heard', () => {
  /** Completes the cookie handshake for `name` and then drops everything it would send. */
  function halfOpen(sim: SimUdp, name: string): UdpPeer {
    const c = sim.connect(name);
    c.on('open', () => sim.net.setLink(name, 'server', { up: false }));
    return c;
  }

  it('are capped per address and in total, never announced, and expire; a newcomer gets in', () => {
    const sim = new SimUdp(channels, { seed: 25 });
    let announced = 0;
    sim.server.on('connection', () => announced++);
    // 40 addresses × 5 ports: 200 half-open sessions within 200 ms.
    for (let i = 0; i < 200; i++) {
      halfOpen(sim, `10.0.${i % 40}.1:${4000 + i}`);
      sim.net.advance(1);
    }
    sim.net.advance(30);
    expect(sim.server.pending.count).toBeLessThanOrEqual(64);
    for (let a = 0; a < 40; a++) expect(sim.server.pending.countFor(`10.0.${a}.1`)).toBeLessThanOrEqual(8);
    expect(sim.server.sessionCount).toBeLessThanOrEqual(64);
    expect(sim.server.pending.dropped).toBeGreaterThanOrEqual(200 - 64);
    expect(announced).toBe(0);
    expect(sim.server.connections.length).toBe(0);
    // A newcomer gets in at once, even from an address the flood used.
    const { server } = sim.pair('10.0.3.1:9999');
    expect(sim.server.connections).toEqual([server]);
    // The rest expire after the pending timeout (2 s).
    sim.net.advance(2600);
    expect(sim.server.pending.count).toBe(0);
    expect(sim.server.sessionCount).toBe(1);
  });

  it('a client evicted before its first datagram arrived gets its session back when it does', () => {
    const sim = new SimUdp(channels, { seed: 27 });
    const name = '10.2.2.2:1000';
    const legit = sim.connect(name);
    // Once open, the client's datagrams take 100 ms to arrive: its session stays pending meanwhile.
    legit.on('open', () => sim.net.setLink(name, 'server', { latencyMs: 100 }));
    sim.net.runUntil(() => legit.state === 'open', 2000);
    const announced: string[] = [];
    sim.server.on('connection', (c) => announced.push(c.remoteAddress));
    // Eight half-open sessions from other ports of the same address evict it.
    for (let p = 0; p < 8; p++) halfOpen(sim, `10.2.2.2:${2000 + p}`);
    sim.net.advance(45);
    expect(sim.server.pending.countFor('10.2.2.2')).toBe(8);
    expect(sim.server.session(name)).toBeUndefined();
    // Its first datagram brings it back, confirmed, with the same session id.
    sim.net.advance(100);
    expect(announced).toEqual([name]);
    const server = sim.server.session(name)!;
    expect(server.session).toBe(legit.session);
    let got = 0;
    server.on('message', (m) => server.send(m.channel, m.data));
    legit.on('message', () => got++);
    legit.send('input', new Uint8Array([1]));
    sim.net.advance(300);
    expect(got).toBe(1);
    expect(legit.state).toBe('open');
  });

  it('maxConnectionsPerAddress refuses further confirmed sessions from one address', () => {
    const sim = new SimUdp(channels, { seed: 26, server: { maxConnectionsPerAddress: 3 } });
    for (let p = 0; p < 3; p++) sim.pair(`10.1.1.1:${5000 + p}`);
    const extra = sim.connect('10.1.1.1:6000');
    let closed: CloseEvent | undefined;
    extra.on('close', (e) => {
      closed = e;
    });
    sim.net.advance(2000);
    expect(closed?.error?.code).toBe('refused');
    expect(closed?.reason).toBe('listener full');
    sim.pair('10.1.1.2:5000'); // another address is not affected
    expect(sim.server.connections.length).toBe(4);
  });
});
