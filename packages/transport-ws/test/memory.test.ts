import { fc, test } from '@fast-check/vitest';
import type { ChannelSpec, CloseEvent } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageTracker } from '../src/message-tracker.js';
import { DEFAULT_MAX_MESSAGE_BYTES, listen, type WsListener, wsMaxPayload } from '../src/server.js';
import { frameHeader, type RawClient, rawUpgrade } from './raw-sockets.js';

const CHANNELS: readonly ChannelSpec[] = [{ name: 'control', kind: 'reliable' }];

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One generated frame: a data fragment (payload length, fin) or a control frame in between. */
type Frame = { kind: 'data'; len: number; fin: boolean } | { kind: 'control'; len: number };

const frames = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant('data' as const),
      len: fc.oneof(fc.integer({ min: 0, max: 125 }), fc.integer({ min: 126, max: 70_000 })),
      fin: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('control' as const), len: fc.integer({ min: 0, max: 125 }) }),
  ),
  { maxLength: 12 },
);

describe('MessageTracker', () => {
  test.prop([frames, fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 20 }), fc.boolean()], {
    numRuns: 150,
  })('counts the payload bytes of the unfinished message, however the stream is cut', (list: Frame[], cuts, masked) => {
    // The stream, and after each byte the model's unfinished count.
    const parts: Uint8Array[] = [];
    const model: number[] = [];
    let unfinished = 0;
    let continuing = false;
    for (const f of list) {
      let h = frameHeader(f.len, f.kind === 'data' ? f.fin : true, f.kind === 'data' ? (continuing ? 0 : 2) : 9);
      if (!masked) {
        h = h.slice(0, h.length - 4);
        h[1] = h[1]! & 0x7f;
      }
      parts.push(h, new Uint8Array(f.len));
      for (let i = 0; i < h.length; i++) model.push(unfinished);
      for (let i = 0; i < f.len; i++) model.push(f.kind === 'data' ? ++unfinished : unfinished);
      if (f.kind === 'data') {
        continuing = !f.fin;
        if (f.fin) {
          unfinished = 0;
          if (model.length > 0) model[model.length - 1] = 0;
        }
      }
    }
    const stream = new Uint8Array(model.length);
    let o = 0;
    for (const p of parts) {
      stream.set(p, o);
      o += p.length;
    }
    const t = new MessageTracker();
    let at = 0;
    let sum = 0;
    let k = 0;
    while (at < stream.length) {
      const n = Math.min(cuts[k++ % cuts.length]!, stream.length - at);
      sum += t.feed(stream.subarray(at, at + n), at);
      at += n;
      expect(t.unfinished).toBe(model[at - 1]);
      expect(sum).toBe(t.unfinished);
    }
  });
});

describe('receive memory of a listener', () => {
  async function hostile(listener: WsListener, n: number, announce: number, send: number): Promise<RawClient[]> {
    const raws: RawClient[] = [];
    cleanups.push(() => {
      for (const r of raws) r.socket.destroy();
    });
    for (let i = 0; i < n; i++) {
      const r = await rawUpgrade(listener.port, `127.0.0.${2 + i}`);
      raws.push(r);
      r.socket.write(frameHeader(announce));
      r.socket.write(new Uint8Array(send));
      // One at a time: wait until the listener has read some of it.
      const before = listener.receiveBufferBytes;
      await pollUntil(() => listener.receiveBufferBytes > before, 2000);
    }
    return raws;
  }

  it('an announced maximal message reserves nothing up front: only what arrived counts', async () => {
    const listener = await listen({ channels: CHANNELS });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    listener.on('error', () => {});
    const max = wsMaxPayload({ maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES, maxUnreliableBytes: 0 } as never);
    const raws = await hostile(listener, 4, max, 1000);
    expect(await pollUntil(() => listener.receiveBufferBytes === 4000, 2000)).toBe(true);
    expect(raws.every((r) => !r.closed)).toBe(true);
  });

  it('past maxReceiveBufferBytes, connections with large unfinished messages stop being read until there is room', async () => {
    const listener = await listen({ channels: CHANNELS, maxReceiveBufferBytes: 300_000 });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    listener.on('error', () => {});
    // 3 × 150 KB of unfinished 500 KB messages: 450 KB wanted, 300 KB allowed.
    const raws = await hostile(listener, 3, 500_000, 150_000);
    expect(await pollUntil(() => listener.pausedSocketCount >= 1, 3000)).toBe(true);
    // Held: the cap plus at most one read past the 64 KiB floor per paused connection.
    expect(listener.receiveBufferBytes).toBeLessThanOrEqual(300_000 + 3 * 128 * 1024);
    expect(listener.receiveBufferBytes).toBeLessThan(450_000);
    expect(raws.every((r) => !r.closed)).toBe(true);
    // One sender goes away: the others are read again and all of their 2 × 150 KB arrives.
    raws[0]!.socket.destroy();
    expect(await pollUntil(() => listener.receiveBufferBytes === 300_000, 3000)).toBe(true);
    expect(listener.pausedSocketCount).toBe(0);
    expect(listener.socketCount).toBe(2);
  });

  it('an honest client sending a large message is unaffected by the cap when under it', async () => {
    const { connectNode } = await import('../src/server.js');
    const listener = await listen({ channels: CHANNELS, maxReceiveBufferBytes: 4 << 20 });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    let got = 0;
    listener.on('connection', (c) => c.on('message', (m) => (got = m.data.length)));
    const c = connectNode(listener.url, { channels: CHANNELS });
    let closed: CloseEvent | undefined;
    c.on('close', (e) => (closed = e));
    cleanups.push(() => c.close());
    expect(await pollUntil(() => c.state === 'open', 3000)).toBe(true);
    c.send('control', new Uint8Array(3 << 20));
    expect(await pollUntil(() => got === 3 << 20, 5000)).toBe(true);
    expect(listener.receiveBufferBytes).toBe(0);
    expect(closed).toBeUndefined();
  });
});
