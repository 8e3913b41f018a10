import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { ChannelSpec, CloseEvent } from '../src/contract.js';
import type { MemoryConnection } from '../src/memory-transport.js';
import { Prng } from '../src/prng.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

const channels: readonly ChannelSpec[] = [
  { name: 'rel', kind: 'reliable' },
  { name: 'unrel', kind: 'unreliable' },
];

/** Runs a seeded scenario and returns the delivery trace (time, channel, first byte, length). */
function scenario(seed: number, loss: number, jitterMs: number): string[] {
  const net = new SimulatedNetwork({ seed, link: { latencyMs: 20, jitterMs, loss, duplicate: 0.05, reorder: 0.05 } });
  const { client, server } = net.pair('a', 'b', { channels });
  const trace: string[] = [];
  server.on('message', (m) => trace.push(`${net.now().toFixed(3)} ${m.channel} ${m.data[0]} ${m.data.length}`));
  const prng = new Prng(seed);
  for (let i = 0; i < 40; i++) {
    client.send(prng.chance(0.5) ? 'rel' : 'unrel', new Uint8Array(prng.int(1, 300)).fill(i));
    net.advance(prng.int(0, 10));
  }
  net.advance(5000);
  return trace;
}

describe('SimulatedNetwork', () => {
  test.prop([fc.integer({ min: 0, max: 2 ** 31 }), fc.double({ min: 0, max: 0.5, noNaN: true }), fc.nat(30)], {
    numRuns: 30,
  })('same seed, same calls → the same deliveries at the same virtual times', (seed, loss, jitter) => {
    expect(scenario(seed, loss, jitter)).toEqual(scenario(seed, loss, jitter));
  });

  it('different seeds behave differently under loss', () => {
    expect(scenario(1, 0.3, 10)).not.toEqual(scenario(2, 0.3, 10));
  });

  test.prop(
    [
      fc.integer({ min: 0, max: 2 ** 31 }),
      fc.double({ min: 0, max: 0.4, noNaN: true }),
      fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 60 }),
    ],
    { numRuns: 40 },
  )('reliable channels deliver everything in order under loss, duplication and reordering', (seed, loss, sizes) => {
    const net = new SimulatedNetwork({
      seed,
      link: { latencyMs: 15, jitterMs: 20, loss, duplicate: 0.1, reorder: 0.2, reorderDelayMs: 30 },
    });
    const { client, server } = net.pair('a', 'b', { channels, waitMs: 60_000 });
    const got: Uint8Array[] = [];
    server.on('message', (m) => got.push(m.data));
    const sent = sizes.map((n, i) => new Uint8Array(n).fill(i & 0xff));
    for (const m of sent) client.send('rel', m);
    expect(net.runUntil(() => got.length === sent.length, 600_000)).toBe(true);
    net.advance(2000);
    expect(got).toEqual(sent);
  });

  it('delivers no earlier than the link latency and honours bandwidth', () => {
    const net = new SimulatedNetwork({ seed: 3, link: { latencyMs: 50, bandwidthBytesPerSec: 1_000_000 } });
    const { client, server } = net.pair('a', 'b', { channels });
    let arrivedAt = -1;
    server.on('message', () => {
      arrivedAt = net.now();
    });
    const t0 = net.now();
    client.send('rel', new Uint8Array(500_000));
    net.runUntil(() => arrivedAt >= 0, 10_000);
    // 500 kB at 1 MB/s = 500 ms on the wire, plus 50 ms of latency.
    expect(arrivedAt - t0).toBeGreaterThanOrEqual(550);
    expect(arrivedAt - t0).toBeLessThan(700);
  });

  it('applies link changes mid-run, per direction', () => {
    const net = new SimulatedNetwork({ seed: 4, link: { latencyMs: 10 } });
    const { client, server } = net.pair('a', 'b', { channels });
    const times: number[] = [];
    server.on('message', () => times.push(net.now()));
    net.setLink('a', 'b', { latencyMs: 200 });
    expect(net.link('b', 'a').latencyMs).toBe(10);
    const t0 = net.now();
    client.send('unrel', new Uint8Array(4));
    net.advance(1000);
    expect(times.length).toBe(1);
    expect(times[0]! - t0).toBeGreaterThanOrEqual(200);
  });

  it('cut links drop everything; a cut direction makes a peer unreachable; heal restores', () => {
    const net = new SimulatedNetwork({ seed: 5 });
    const opts = { channels, timeouts: { interruptMs: 100, disconnectMs: 500, connectMs: 1000 } };
    net.listen('hub', opts);
    net.cut('carol', 'hub');
    const carol = net.connect('carol', 'hub', opts);
    let closed: CloseEvent | undefined;
    carol.on('close', (e) => {
      closed = e;
    });
    net.advance(2000);
    expect(carol.state).toBe('closed');
    expect(closed?.code).toBe('timeout');
    expect(net.stats.packetsCut).toBeGreaterThan(0);
    net.heal();
    const again = net.connect('carol', 'hub', opts);
    net.advance(200);
    expect(again.state).toBe('open');
  });

  it('partition splits groups and the peers time out on both sides', () => {
    const net = new SimulatedNetwork({ seed: 6 });
    const timeouts = { interruptMs: 100, disconnectMs: 400, connectMs: 1000 };
    const { client, server } = net.pair('a', 'b', { channels, timeouts });
    const events: string[] = [];
    for (const [name, c] of [
      ['a', client],
      ['b', server],
    ] as const) {
      c.on('interrupted', () => events.push(`${name}:interrupted`));
      c.on('close', (e) => events.push(`${name}:${e.code}`));
    }
    net.partition(['a'], ['b', 'c']);
    net.advance(1000);
    expect(events.sort()).toEqual(['a:interrupted', 'a:timeout', 'b:interrupted', 'b:timeout']);
  });

  it('an interruption shorter than the disconnect timeout ends with resumed', () => {
    const net = new SimulatedNetwork({ seed: 7 });
    const timeouts = { interruptMs: 100, disconnectMs: 1000, connectMs: 1000 };
    const { client } = net.pair('a', 'b', { channels, timeouts });
    const events: string[] = [];
    client.on('interrupted', () => events.push('interrupted'));
    client.on('resumed', (e) => events.push(`resumed>${e.interruptedMs >= 100}`));
    net.cutBoth('a', 'b');
    net.advance(300);
    net.heal();
    net.advance(300);
    expect(events).toEqual(['interrupted', 'resumed>true']);
    expect(client.state).toBe('open');
  });

  it('refuses: nothing listening, channel mismatch, listener full', () => {
    const net = new SimulatedNetwork({ seed: 8 });
    const codes: string[] = [];
    const watch = (c: MemoryConnection) => c.on('close', (e) => codes.push(`${e.code}/${e.error?.code}`));
    watch(net.connect('a', 'nobody', { channels }));
    net.listen('srv', { channels, maxConnections: 1 });
    watch(net.connect('b', 'srv', { channels: [{ name: 'other', kind: 'reliable' }] }));
    const ok = net.connect('c', 'srv', { channels });
    watch(net.connect('d', 'srv', { channels }));
    net.advance(500);
    expect(ok.state).toBe('open');
    expect(codes.sort()).toEqual(['refused/refused', 'refused/refused', 'refused/refused']);
  });

  it('unreliable channels drop stale messages under reordering', () => {
    const net = new SimulatedNetwork({ seed: 9, link: { latencyMs: 5, jitterMs: 40 } });
    const { client, server } = net.pair('a', 'b', { channels });
    const got: number[] = [];
    server.on('message', (m) => got.push(m.data[0]!));
    for (let i = 0; i < 100; i++) client.send('unrel', new Uint8Array([i]));
    net.advance(500);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(100); // jitter reordered them, so some were stale
    for (let i = 1; i < got.length; i++) expect(got[i]!).toBeGreaterThan(got[i - 1]!);
  });

  it('mesh connects every pair and routes each message to its own peer', () => {
    const net = new SimulatedNetwork({ seed: 12, link: { latencyMs: 4 } });
    const names = ['w', 'x', 'y', 'z'];
    const links = net.mesh(names, { channels });
    const got: string[] = [];
    for (const a of names) {
      for (const b of names) {
        if (a === b) continue;
        const conn = links.get(a)!.get(b)!;
        expect(conn.state).toBe('open');
        conn.on('message', (m) => got.push(`${a}<-${new TextDecoder().decode(m.data)}`));
      }
    }
    for (const a of names)
      for (const b of names) if (a !== b) links.get(a)!.get(b)!.send('rel', new TextEncoder().encode(a));
    net.advance(50);
    const expected = names.flatMap((a) => names.filter((b) => b !== a).map((b) => `${a}<-${b}`));
    expect(got.sort()).toEqual(expected.sort());
  });

  it('connects N endpoints pairwise and routes each message to its own peer', () => {
    const net = new SimulatedNetwork({ seed: 10, link: { latencyMs: 7, jitterMs: 3 } });
    const names = ['p0', 'p1', 'p2', 'p3'];
    const conns: Array<[string, MemoryConnection]> = [];
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const { client, server } = net.pair(names[i]!, names[j]!, { channels });
        conns.push([`${names[i]}>${names[j]}`, client], [`${names[j]}>${names[i]}`, server]);
      }
    }
    const received = new Map<string, string[]>();
    for (const [label, c] of conns) {
      received.set(label, []);
      c.on('message', (m) => received.get(label)!.push(new TextDecoder().decode(m.data)));
    }
    for (const [label, c] of conns) c.send('rel', new TextEncoder().encode(label));
    net.advance(100);
    expect(conns.length).toBe(12);
    for (const [label] of conns) {
      const [from, to] = label.split('>');
      expect(received.get(label)).toEqual([`${to}>${from}`]);
    }
  });

  it('listener close closes its connections with the reason', () => {
    const net = new SimulatedNetwork({ seed: 11 });
    const listener = net.listen('srv', { channels });
    const c = net.connect('a', 'srv', { channels });
    net.advance(100);
    let reason = '';
    c.on('close', (e) => {
      reason = `${e.code}:${e.reason}`;
    });
    listener.close('maintenance');
    net.advance(100);
    expect(reason).toBe('remote:maintenance');
    expect(listener.connections.length).toBe(0);
  });

  it('queues sends made while connecting and delivers them once open', () => {
    const net = new SimulatedNetwork({ seed: 13, link: { latencyMs: 25 } });
    net.listen('srv', { channels });
    const got: string[] = [];
    const conn = net.connect('a', 'srv', { channels });
    const server = net.listenerAt('srv')!;
    server.on('connection', (c) => c.on('message', (m) => got.push(`${m.channel}:${m.data[0]}`)));
    expect(conn.state).toBe('connecting');
    conn.send('rel', new Uint8Array([1]));
    conn.send('rel', new Uint8Array([2]));
    expect(conn.stats.sendQueueLength).toBe(2);
    net.advance(200);
    expect(got).toEqual(['rel:1', 'rel:2']);
    expect(conn.stats.sendQueueLength).toBe(0);
  });

  it('close while connecting ends with code local; send then throws closed', () => {
    const net = new SimulatedNetwork({ seed: 14 });
    net.listen('srv', { channels });
    const conn = net.connect('a', 'srv', { channels });
    const codes: string[] = [];
    conn.on('close', (e) => codes.push(e.code));
    conn.close('changed my mind');
    expect(codes).toEqual(['local']);
    expect(() => conn.send('rel', new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'closed' }));
    net.advance(1000);
    expect(codes).toEqual(['local']);
  });

  it('bounds the reliable send queue with TransportError(limit)', () => {
    const net = new SimulatedNetwork({ seed: 15 });
    const { client } = net.pair('a', 'b', { channels, maxSendQueue: 3 });
    for (let i = 0; i < 3; i++) client.send('rel', new Uint8Array(1));
    expect(() => client.send('rel', new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'limit' }));
    client.send('unrel', new Uint8Array(1)); // unreliable messages are not queued
    net.advance(100);
    client.send('rel', new Uint8Array(1)); // acknowledged: room again
  });

  it('validates link conditions and channel lists', () => {
    expect(() => new SimulatedNetwork({ link: { loss: 2 } })).toThrow(/probabilities/);
    const net = new SimulatedNetwork();
    expect(() => net.setLink('a', 'b', { latencyMs: -1 })).toThrow(/non-negative/);
    expect(() =>
      net.connect('a', 'b', {
        channels: [
          { name: 'x', kind: 'reliable' },
          { name: 'x', kind: 'unreliable' },
        ],
      }),
    ).toThrow(/duplicate/);
  });
});
