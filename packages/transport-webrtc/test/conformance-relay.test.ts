import { fc } from '@fast-check/vitest';
import { type ConformanceHarness, defineTransportConformance, pollUntil } from '@netplay/transport/conformance';
import { describe, expect, it } from 'vitest';
import { makePair } from './harness.js';
import { RelayPath } from './relay-path.js';

// The same two node-datachannel peers, but every UDP datagram between them crosses a seeded
// impairing relay, the only ICE path (test/relay-path.ts): `impair` applies real loss,
// duplication, reordering, latency and jitter *below* DTLS and SCTP, so the suite's "under loss"
// cases test SCTP's retransmission for reliable channels and our sequence numbers for unreliable
// ones. `cut` makes the relay drop everything.
let seed = 1;
const harness: ConformanceHarness = {
  name: 'transport-webrtc through an impairing UDP relay',
  async pair({ channels, timeouts, rateLimits }) {
    const relay = new RelayPath(seed++);
    const p = await makePair(channels, timeouts, rateLimits ? { rateLimits } : {}, relay);
    return {
      client: p.client,
      server: p.host,
      until: (predicate, budgetMs) => pollUntil(predicate, budgetMs),
      impair: (i) =>
        relay.impair({
          loss: i.loss ?? 0,
          duplicate: i.duplicate ?? 0,
          reorder: i.reorder ?? 0,
          latencyMs: i.latencyMs ?? 0,
          jitterMs: i.jitterMs ?? 0,
        }),
      cut: () => relay.impair({ cut: true }),
      dispose: () => p.dispose(),
    };
  },
};

defineTransportConformance(harness, { describe, it });

describe('the relay path', () => {
  it('carries every datagram of the connection: impaired, the relay drops some and data still flows', async () => {
    const relay = new RelayPath(99);
    const p = await makePair([{ name: 'r', kind: 'reliable' }], {}, {}, relay);
    try {
      const before = await relay.stats();
      expect(before.forwarded).toBeGreaterThan(0); // ICE, DTLS and SCTP went through it
      relay.impair({ loss: 0.2 });
      let got = 0;
      p.host.on('message', () => {
        got++;
      });
      for (let i = 0; i < 100; i++) p.client.send('r', new Uint8Array(100));
      expect(await pollUntil(() => got === 100, 20_000)).toBe(true);
      const after = await relay.stats();
      expect(after.dropped).toBeGreaterThan(0);
      expect(after.forwarded).toBeGreaterThan(before.forwarded);
    } finally {
      await p.dispose();
    }
  });

  it('lossRate follows real loss on the path, and stays 0 without it', async () => {
    const relay = new RelayPath(7);
    const p = await makePair(
      [{ name: 'r', kind: 'reliable' }],
      { interruptMs: 3000, disconnectMs: 10_000 },
      { pingIntervalMs: 20 },
      relay,
    );
    try {
      await pollUntil(() => p.client.stats.pingsSent > 30, 5000);
      expect(p.client.stats.lossRate).toBe(0);
      relay.impair({ loss: 0.3 });
      const from = p.client.stats.pingsSent;
      await pollUntil(() => p.client.stats.pingsSent > from + 100, 10_000);
      // One-way 30 % each way: about half the round trips lose their PING or PONG.
      expect(p.client.stats.lossRate).toBeGreaterThan(0.1);
      expect(p.client.stats.lossRate).toBeLessThan(0.6);
      expect(p.client.stats.pongsReceived).toBeLessThan(p.client.stats.pingsSent);
    } finally {
      await p.dispose();
    }
  });

  it('no path at all: the connect ends with a timeout error naming connectMs', async () => {
    const relay = new RelayPath(8);
    relay.impair({ cut: true });
    await expect(makePair([{ name: 'r', kind: 'reliable' }], { connectMs: 1500 }, {}, relay)).rejects.toThrow(
      /client closed, timeout: no connection within 1500 ms/,
    );
  });

  it('under generated impairments, reliable messages all arrive in order and unreliable ones only newer (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          loss: fc.double({ min: 0, max: 0.25, noNaN: true }),
          duplicate: fc.double({ min: 0, max: 0.3, noNaN: true }),
          reorder: fc.double({ min: 0, max: 0.5, noNaN: true }),
          latencyMs: fc.integer({ min: 0, max: 5 }),
          jitterMs: fc.integer({ min: 0, max: 10 }),
        }),
        fc.integer({ min: 1, max: 0xffff }),
        fc.integer({ min: 20, max: 150 }),
        async (impairment, seed, n) => {
          const relay = new RelayPath(seed);
          const channels = [
            { name: 'r', kind: 'reliable' },
            { name: 'u', kind: 'unreliable' },
          ] as const;
          const p = await makePair(channels, { interruptMs: 2000, disconnectMs: 10_000 }, {}, relay);
          try {
            relay.impair(impairment);
            const reliable: number[] = [];
            const unreliable: number[] = [];
            p.host.on('message', (m) =>
              (m.channel === 'r' ? reliable : unreliable).push(m.data[0]! | (m.data[1]! << 8)),
            );
            const msg = new Uint8Array(64);
            for (let i = 0; i < n; i++) {
              msg[0] = i & 0xff;
              msg[1] = i >> 8;
              p.client.send('r', msg);
              p.client.send('u', msg);
              if (i % 10 === 9) await pollUntil(() => false, 2);
            }
            expect(await pollUntil(() => reliable.length >= n, 20_000)).toBe(true);
            await pollUntil(() => false, 100);
            expect(reliable).toEqual(Array.from({ length: n }, (_, i) => i));
            for (let i = 1; i < unreliable.length; i++) expect(unreliable[i]!).toBeGreaterThan(unreliable[i - 1]!);
            for (const x of unreliable) expect(x).toBeLessThan(n);
          } finally {
            await p.dispose();
          }
        },
      ),
      { numRuns: 6 },
    );
  });
});
