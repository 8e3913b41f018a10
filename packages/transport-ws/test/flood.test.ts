import type { ChannelSpec, CloseEvent } from '@netplay/transport';
import { DEFAULT_RATE_LIMITS } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { connect } from '../src/index.js';
import { connectNode, listen, type WebSocketConstructor, type WsConnection, type WsListener } from '../src/server.js';

const CHANNELS: readonly ChannelSpec[] = [{ name: 'control', kind: 'reliable' }];
const tick = () => new Promise<void>((r) => setImmediate(r));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('rate limits', () => {
  it('a peer sending ~1.9 M messages in 10 s is closed with flood quickly; another keeps exchanging', async () => {
    const listener: WsListener = await listen({ channels: CHANNELS }); // default rate limits
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    const serverCloses: CloseEvent[] = [];
    listener.on('error', () => {});
    listener.on('connection', (c) => {
      c.on('message', (m) => c.state === 'open' && c.send(m.channel, m.data));
      c.on('close', (e) => serverCloses.push(e));
    });
    // The flooder's own budget is off: the server echoes its flood back to it.
    const open = async (rateLimits?: false): Promise<WsConnection> => {
      const c = connectNode(listener.url, { channels: CHANNELS, ...(rateLimits === false ? { rateLimits } : {}) });
      cleanups.push(() => c.close());
      expect(await pollUntil(() => c.state === 'open', 3000)).toBe(true);
      return c;
    };
    const honest = await open();
    const flooder = await open(false);
    let honestEchoes = 0;
    honest.on('message', () => {
      honestEchoes++;
    });
    // The honest peer sends at a game's pace (a message every 4 ms) for the whole test.
    const pace = setInterval(() => honest.state === 'open' && honest.send('control', new Uint8Array(8)), 4);
    cleanups.push(() => clearInterval(pace));
    let flooderClose: CloseEvent | undefined;
    flooder.on('close', (e) => {
      flooderClose = e;
    });
    // The attack of issue 13: 1.9 M 40-byte messages within 10 s, as fast as the socket takes them.
    const msg = new Uint8Array(40);
    const t0 = performance.now();
    let sent = 0;
    while (flooder.state === 'open' && sent < 1_900_000 && performance.now() - t0 < 10_000) {
      for (let i = 0; i < 2000 && flooder.state === 'open'; i++, sent++) flooder.send('control', msg);
      while (flooder.state === 'open' && flooder.bufferedAmount > 1 << 20) await tick();
      await tick();
    }
    expect(await pollUntil(() => flooderClose !== undefined, 5000)).toBe(true);
    const took = performance.now() - t0;
    expect(flooderClose?.code, flooderClose?.reason).toBe('remote');
    expect(flooderClose?.reason.startsWith('flood')).toBe(true);
    expect(serverCloses).toHaveLength(1);
    expect(serverCloses[0]?.code).toBe('error');
    expect(serverCloses[0]?.error?.code).toBe('flood');
    // Past the burst (2 s × 4,000 messages) it goes at once; far under the 10 s of the attack.
    expect(sent).toBeLessThan(1_900_000);
    expect(took).toBeLessThan(3000);
    // The honest peer kept exchanging throughout and still does.
    const before = honestEchoes;
    expect(before).toBeGreaterThan(0);
    expect(await pollUntil(() => honestEchoes >= before + 50, 3000)).toBe(true);
    expect(honest.state).toBe('open');
    expect(listener.connections).toHaveLength(1);
  }, 30_000);

  it('within the default budget nobody is closed: 60 fps × 16 players of inputs for 2 s', async () => {
    const listener = await listen({ channels: CHANNELS });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    let received = 0;
    listener.on('connection', (c) => c.on('message', () => received++));
    const c = connectNode(listener.url, { channels: CHANNELS });
    cleanups.push(() => c.close());
    expect(await pollUntil(() => c.state === 'open', 3000)).toBe(true);
    // 16 input messages per frame, 120 frames at once: 1,920 messages, under the 2 s burst.
    for (let f = 0; f < 120; f++) for (let p = 0; p < 16; p++) c.send('control', new Uint8Array(32));
    expect(await pollUntil(() => received === 1920, 5000)).toBe(true);
    expect(c.state).toBe('open');
    expect(1920).toBeLessThan(DEFAULT_RATE_LIMITS.messagesPerSecond * DEFAULT_RATE_LIMITS.burstSeconds);
  });

  it('with the default budget, a maximal message followed by more messages is not a flood', async () => {
    const listener = await listen({ channels: CHANNELS });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    let bytes = 0;
    let closed: CloseEvent | undefined;
    listener.on('connection', (c) => {
      c.on('message', (m) => {
        bytes += m.data.length;
      });
      c.on('close', (e) => {
        closed = e;
      });
    });
    const c = connectNode(listener.url, { channels: CHANNELS });
    cleanups.push(() => c.close());
    expect(await pollUntil(() => c.state === 'open', 3000)).toBe(true);
    const max = c.limits.maxMessageBytes; // 8 MiB by default: a savestate of the largest size
    c.send('control', new Uint8Array(max));
    for (let i = 0; i < 100; i++) c.send('control', new Uint8Array(1024));
    expect(await pollUntil(() => bytes === max + 100 * 1024, 10_000)).toBe(true);
    expect(closed).toBeUndefined();
    expect(c.state).toBe('open');
  });

  it('rateLimits: false disables the budget', async () => {
    const listener = await listen({ channels: CHANNELS, rateLimits: false });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    let received = 0;
    listener.on('connection', (c) => c.on('message', () => received++));
    const c = connectNode(listener.url, { channels: CHANNELS });
    cleanups.push(() => c.close());
    expect(await pollUntil(() => c.state === 'open', 3000)).toBe(true);
    for (let i = 0; i < 20_000; i++) c.send('control', new Uint8Array(8));
    expect(await pollUntil(() => received === 20_000, 10_000)).toBe(true);
    expect(c.state).toBe('open');
  });

  it('the browser client applies its budget too: a flooding server is closed with flood', async () => {
    const listener = await listen({ channels: CHANNELS, rateLimits: false });
    cleanups.push(async () => {
      listener.close();
      await listener.whenClosed();
    });
    let serverClose: CloseEvent | undefined;
    listener.on('connection', (c) => {
      c.on('close', (e) => {
        serverClose = e;
      });
      for (let i = 0; i < 1000 && c.state === 'open'; i++) c.send('control', new Uint8Array(8));
    });
    const c = connect(listener.url, {
      channels: CHANNELS,
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      rateLimits: { messagesPerSecond: 100, bytesPerSecond: 1 << 20, burstSeconds: 1 },
    });
    cleanups.push(() => c.close());
    let received = 0;
    c.on('message', () => received++);
    let clientClose: CloseEvent | undefined;
    c.on('close', (e) => {
      clientClose = e;
    });
    expect(await pollUntil(() => clientClose !== undefined && serverClose !== undefined, 5000)).toBe(true);
    expect(clientClose?.code).toBe('error');
    expect(clientClose?.error?.code).toBe('flood');
    expect(serverClose?.code).toBe('remote');
    expect(serverClose?.reason.startsWith('flood')).toBe(true);
    expect(received).toBeLessThan(1000);
  });

  it('rejects bad rate limits with invalid-argument', async () => {
    await expect(
      (async () =>
        listen({ channels: CHANNELS, rateLimits: { messagesPerSecond: 0, bytesPerSecond: 1, burstSeconds: 1 } }))(),
    ).rejects.toMatchObject({ code: 'invalid-argument' });
  });
});
