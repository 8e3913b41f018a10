import { fc, test } from '@fast-check/vitest';
import { type ChannelSpec, type CloseEvent, Prng } from '@netplay/transport';
import { describe, expect, it } from 'vitest';
import { fragmentSize, resolveConfig } from '../src/config.js';
import { DataFlag, encodeDataPacket, encodeFragmentFrame, putU32, seal, sealData } from '../src/wire.js';
import { SimUdp } from './sim-harness.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

function trace(seed: number): string[] {
  const sim = new SimUdp(channels, {
    seed,
    link: { latencyMs: 10, jitterMs: 8, loss: 0.1, duplicate: 0.05, reorder: 0.1 },
  });
  const { client, server } = sim.pair();
  const out: string[] = [];
  server.on('message', (m) => out.push(`${sim.net.now().toFixed(3)}:${m.channel}:${m.data.length}:${m.data[0]}`));
  const prng = new Prng(seed);
  for (let i = 0; i < 30; i++) {
    const unreliable = prng.chance(0.3);
    client.send(unreliable ? 'state' : 'bulk', new Uint8Array(prng.int(1, unreliable ? 1000 : 4000)).fill(i));
    sim.net.advance(prng.int(0, 20));
  }
  sim.net.advance(5000);
  return out;
}

describe('UDP core on the simulated network', () => {
  test.prop([fc.integer({ min: 1, max: 2 ** 31 })], { numRuns: 5 })('is deterministic for a seed', (seed) => {
    expect(trace(seed)).toEqual(trace(seed));
  });

  test.prop(
    [
      fc.integer({ min: 1, max: 2 ** 31 }),
      fc.double({ min: 0, max: 0.25, noNaN: true }),
      fc.array(fc.tuple(fc.constantFrom('input', 'bulk', 'state'), fc.integer({ min: 0, max: 12_000 })), {
        minLength: 1,
        maxLength: 40,
      }),
    ],
    { numRuns: 25 },
  )('reliable channels deliver every message whole and in order; unreliable never stale', (seed, loss, plan) => {
    const sim = new SimUdp(channels, {
      seed,
      link: { latencyMs: 5, jitterMs: 10, loss, duplicate: 0.05, reorder: 0.1, reorderDelayMs: 15 },
    });
    // This property is about delivery. With up to 25 % loss each way, a handshake can lose every
    // attempt within the default 5 s connect timeout (≈ 1 seed in 150 at 20 %): give it longer.
    const { client, server } = sim.pair('client', { timeouts: { connectMs: 60_000 } });
    const got = new Map<string, Uint8Array[]>([
      ['input', []],
      ['bulk', []],
      ['state', []],
    ]);
    server.on('message', (m) => got.get(m.channel)!.push(m.data));
    const sent = new Map<string, Uint8Array[]>([
      ['input', []],
      ['bulk', []],
      ['state', []],
    ]);
    const prng = new Prng(seed);
    plan.forEach(([ch, size], i) => {
      const n = ch === 'state' ? Math.min(size, client.limits.maxUnreliableBytes) : size;
      const m = prng.fill(new Uint8Array(Math.max(4, n)));
      new DataView(m.buffer).setUint32(0, i);
      sent.get(ch)!.push(m);
      client.send(ch, m);
    });
    const want = sent.get('input')!.length + sent.get('bulk')!.length;
    const ok = sim.net.runUntil(() => got.get('input')!.length + got.get('bulk')!.length >= want, 120_000);
    expect(ok).toBe(true);
    expect(got.get('input')).toEqual(sent.get('input'));
    expect(got.get('bulk')).toEqual(sent.get('bulk'));
    let last = -1;
    for (const m of got.get('state')!) {
      const i = new DataView(m.buffer, m.byteOffset).getUint32(0);
      expect(i).toBeGreaterThan(last);
      expect(m).toEqual(sent.get('state')!.find((s) => new DataView(s.buffer).getUint32(0) === i));
      last = i;
    }
    sim.net.runUntil(() => client.stats.sendQueueLength === 0, 60_000);
    expect(client.stats.sendQueueLength).toBe(0);
  });

  it('moves 1 MiB intact at 10 % loss and retransmits', () => {
    const sim = new SimUdp(channels, { seed: 42, link: { latencyMs: 10, jitterMs: 2, loss: 0.1 } });
    const { client, server } = sim.pair();
    const big = new Prng(1).fill(new Uint8Array(1 << 20));
    let got: Uint8Array | undefined;
    server.on('message', (m) => {
      got = m.data;
    });
    client.send('bulk', big);
    expect(sim.net.runUntil(() => got !== undefined, 60_000)).toBe(true);
    expect(got !== undefined && Buffer.compare(got, big) === 0).toBe(true);
    expect(client.stats.retransmissions).toBeGreaterThan(0);
    expect(client.counters.packetsLost).toBeGreaterThan(0);
    expect(client.stats.lossRate).toBeGreaterThan(0);
  });

  it('acks are exact: no loss and no reordering beyond jitter means (almost) no retransmissions', () => {
    const sim = new SimUdp(channels, { seed: 21, link: { latencyMs: 10, jitterMs: 3 } });
    const { client, server } = sim.pair();
    let got = 0;
    server.on('message', () => got++);
    for (let i = 0; i < 4; i++) client.send('bulk', new Uint8Array(512 << 10));
    for (let i = 0; i < 500; i++) client.send('input', new Uint8Array(16));
    expect(sim.net.runUntil(() => got === 504 && client.stats.sendQueueLength === 0, 60_000)).toBe(true);
    // Over 1800 datagrams, reordered by jitter within a burst: spurious resends stay rare.
    expect(client.stats.packetsSent).toBeGreaterThan(1800);
    expect(client.stats.retransmissions).toBeLessThanOrEqual(client.stats.packetsSent * 0.01);
    expect(server.drops.duplicate).toBe(0);
  });

  it('flow control: inputs keep flowing while a large transfer fills a slow link', () => {
    const latencyMs = 20;
    const sim = new SimUdp(channels, { seed: 7, link: { latencyMs, bandwidthBytesPerSec: 1_000_000 } });
    const { client, server } = sim.pair();
    const sentAt = new Map<number, number>();
    const delays: number[] = [];
    let bulkAt = -1;
    server.on('message', (m) => {
      if (m.channel === 'input') delays.push(sim.net.now() - sentAt.get(m.data[0]!)!);
      else bulkAt = sim.net.now();
    });
    const t0 = sim.net.now();
    client.send('bulk', new Uint8Array(2 << 20));
    for (let i = 0; i < 100; i++) {
      sentAt.set(i, sim.net.now());
      client.send('input', new Uint8Array(16).fill(i));
      sim.net.advance(16);
    }
    sim.net.runUntil(() => bulkAt >= 0, 60_000);
    // 2 MiB at 1 MB/s needs ≥ 2.1 s on the wire; the inputs sent during it arrived in a few RTTs.
    expect(bulkAt - t0).toBeGreaterThan(2000);
    expect(delays.length).toBe(100);
    const worst = Math.max(...delays);
    expect(worst).toBeLessThan(10 * latencyMs);
  });

  it('refuses clients past maxConnections, and clients with other channels', () => {
    const sim = new SimUdp(channels, { seed: 3, server: { maxConnections: 2 } });
    const a = sim.connect('a');
    const b = sim.connect('b');
    const c = sim.connect('c');
    const d = sim.connect('d', undefined, [{ name: 'other', kind: 'reliable' }]);
    const closes = new Map<string, CloseEvent>();
    c.on('close', (e) => closes.set('c', e));
    d.on('close', (e) => closes.set('d', e));
    sim.net.advance(2000);
    expect([a.state, b.state]).toEqual(['open', 'open']);
    // c's CONNECT came in while a and b were still pending (pending sessions are counted apart):
    // it was accepted, then closed when it was heard, the listener being full by then.
    expect(closes.get('c')?.code).toBe('remote');
    expect(closes.get('c')?.reason).toBe('listener full');
    expect(closes.get('d')?.error?.code).toBe('refused');
    expect(sim.server.connections.length).toBe(2);
    // Once a and b are confirmed, a newcomer is refused at its CONNECT.
    const e = sim.connect('e');
    e.on('close', (ev) => closes.set('e', ev));
    sim.net.advance(2000);
    expect(closes.get('e')?.error?.code).toBe('refused');
    expect(closes.get('e')?.reason).toBe('listener full');
  });

  it('a client restarting on the same address replaces its old session', () => {
    const sim = new SimUdp(channels, { seed: 11 });
    const first = sim.pair('same');
    let oldClose: CloseEvent | undefined;
    first.server.on('close', (e) => {
      oldClose = e;
    });
    first.client.close(); // (its Close may or may not get through; the restart must work either way)
    const second = sim.pair('same');
    expect(second.server).not.toBe(first.server);
    expect(second.client.session).not.toBe(first.client.session);
    expect(oldClose?.code === 'remote' || oldClose?.error?.code === 'closed').toBe(true);
    let got = 0;
    second.server.on('message', () => got++);
    second.client.send('input', new Uint8Array([1]));
    sim.net.advance(100);
    expect(got).toBe(1);
    expect(sim.server.connections).toEqual([second.server]);
  });

  it('a restarted client whose old session is still open takes over the address', () => {
    const sim = new SimUdp(channels, { seed: 12 });
    const first = sim.pair('same');
    let oldClose: CloseEvent | undefined;
    first.server.on('close', (e) => {
      oldClose = e;
    });
    // The old client vanishes without a word (crash): only the new one talks from now on.
    const second = sim.pair('same');
    expect(oldClose?.code).toBe('error');
    expect(oldClose?.error?.code).toBe('closed');
    expect(second.server.state).toBe('open');
    expect(sim.server.connections).toEqual([second.server]);
  });

  it('carries empty messages on both kinds of channel', () => {
    const sim = new SimUdp(channels, { seed: 13 });
    const { client, server } = sim.pair();
    const got: string[] = [];
    server.on('message', (m) => got.push(`${m.channel}:${m.data.length}`));
    client.send('input', new Uint8Array(0));
    client.send('state', new Uint8Array(0));
    client.send('bulk', new Uint8Array(0));
    sim.net.advance(100);
    expect(got.sort()).toEqual(['bulk:0', 'input:0', 'state:0']);
  });

  it('a client with nothing answering times out with code timeout', () => {
    const sim = new SimUdp(channels, { seed: 4, config: { timeouts: { connectMs: 800 } } });
    sim.net.cutBoth('lonely', 'server');
    const c = sim.connect('lonely');
    let closed: CloseEvent | undefined;
    c.on('close', (e) => {
      closed = e;
    });
    sim.net.advance(1000);
    expect(closed?.code).toBe('timeout');
  });

  it('closes a peer that exceeds the reassembly memory limit with TransportError(limit)', () => {
    const config = { maxMessageBytes: 100_000, maxReassemblyBytes: 300_000 };
    const sim = new SimUdp(channels, { seed: 5, config });
    const { client, server } = sim.pair('mallory', config);
    let closed: CloseEvent | undefined;
    server.on('close', (e) => {
      closed = e;
    });
    // A hostile client sends the first fragment of many large messages and never completes them:
    // what it sent (not what it announced) goes past the limit after about 240 fragments.
    const frag = fragmentSize(resolveConfig(config));
    for (let seq = 1; seq <= 300; seq++) {
      const frame = encodeFragmentFrame(1, seq, 100_000, 0, frag, new Uint8Array(frag));
      sim.server.input(encodeDataPacket(client.session, frame, { seq: 1000 + seq }), 'mallory');
    }
    expect(closed?.code).toBe('error');
    expect(closed?.error?.code).toBe('limit');
  });

  it('closes a peer announcing a message above maxMessageBytes with TransportError(too-large)', () => {
    const sim = new SimUdp(channels, { seed: 6, config: { maxMessageBytes: 10_000, maxReassemblyBytes: 20_000 } });
    const { client, server } = sim.pair('big', { maxMessageBytes: 100_000 });
    let closed: CloseEvent | undefined;
    server.on('close', (e) => {
      closed = e;
    });
    client.send('bulk', new Uint8Array(50_000));
    sim.net.advance(500);
    expect(closed?.error?.code).toBe('too-large');
  });

  test.prop([fc.array(fc.uint8Array({ minLength: 0, maxLength: 300 }), { maxLength: 40 })], { numRuns: 60 })(
    'arbitrary datagrams from an unverified address never get a larger reply, never create a session, never throw',
    (datagrams) => {
      const sim = new SimUdp(channels, { seed: 8 });
      for (const raw of datagrams) {
        // Half of them get a valid CRC so they reach the parsers.
        const d = raw.slice();
        if (d.length >= 9 && d[0]! & 1) seal(d);
        const before = sim.serverSent.length;
        sim.server.input(d, 'attacker');
        for (const r of sim.serverSent.slice(before)) expect(r.bytes).toBeLessThanOrEqual(d.length);
      }
      expect(sim.server.session('attacker')).toBeUndefined();
    },
  );

  test.prop([fc.array(fc.uint8Array({ minLength: 0, maxLength: 1300 }), { maxLength: 30 })], { numRuns: 40 })(
    'a connected peer survives arbitrary datagrams with a valid session id and CRC',
    (bodies) => {
      const sim = new SimUdp(channels, { seed: 9 });
      const { client, server } = sim.pair();
      for (const body of bodies) {
        const d = new Uint8Array(Math.max(9, body.length));
        d.set(body.subarray(0, d.length));
        putU32(d, 4, client.session);
        seal(d);
        sim.server.input(d, 'client');
        // The same bytes as a version-2 DATA packet of this connection (CRC'd when flagged).
        const v2 = new Uint8Array(Math.max(3, body.length) + 4);
        v2.set(body.subarray(0, v2.length - 4));
        v2[0] = 0x80 | (v2[0]! & 0x3f);
        v2[1] = client.session >>> 8;
        v2[2] = client.session;
        const n = (v2[0]! & DataFlag.Crc) !== 0 ? sealData(v2, v2.length - 4) : v2.length - 4;
        sim.server.input(v2.subarray(0, n), 'client');
      }
      sim.net.advance(50);
      // The connection may have been closed by a protocol-level limit, but with a typed error only.
      const state = (): string => server.state;
      if (state() === 'open') {
        let got = 0;
        server.on('message', () => got++);
        client.send('input', new Uint8Array([1]));
        sim.net.runUntil(() => got > 0 || state() === 'closed', 5000);
        expect(got > 0 || state() === 'closed').toBe(true);
      }
    },
  );
});
