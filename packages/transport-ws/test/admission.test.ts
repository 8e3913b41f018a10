import type { ChannelSpec } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { connectNode, listen, type WsConnection, type WsListener, type WsListenOptions } from '../src/server.js';
import { HALF_REQUEST, type RawClient, rawClient, rawUpgrade } from './raw-sockets.js';

const CHANNELS: readonly ChannelSpec[] = [{ name: 'control', kind: 'reliable' }];

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(extra: Partial<WsListenOptions> = {}): Promise<WsListener> {
  const listener = await listen({ channels: CHANNELS, ...extra });
  listener.on('error', () => {});
  listener.on('connection', (c) => c.on('message', (m) => c.state === 'open' && c.send(m.channel, m.data)));
  cleanups.push(async () => {
    listener.close();
    await listener.whenClosed();
  });
  return listener;
}

function client(url: string): WsConnection {
  const c = connectNode(url, { channels: CHANNELS });
  cleanups.push(() => c.close());
  return c;
}

function keep(raws: RawClient[]): RawClient[] {
  cleanups.push(() => {
    for (const r of raws) r.socket.destroy();
  });
  return raws;
}

describe('admission of sockets that have not finished the WebSocket upgrade', () => {
  it('closes silent and half-HTTP sockets after upgradeTimeoutMs; they count toward nothing else', async () => {
    const listener = await server({ upgradeTimeoutMs: 400, maxConnections: 1 });
    const raws = keep([
      ...(await Promise.all([0, 1, 2].map(() => rawClient(listener.port)))),
      ...(await Promise.all([0, 1, 2].map(() => rawClient(listener.port, '127.0.0.1', HALF_REQUEST)))),
    ]);
    expect(await pollUntil(() => listener.pendingSocketCount === 6, 2000)).toBe(true);
    expect(listener.socketCount).toBe(0);
    // maxConnections 1 is not used up by six pending sockets: a real client gets in.
    const c = client(listener.url);
    expect(await pollUntil(() => c.state === 'open', 2000)).toBe(true);
    expect(listener.socketCount).toBe(1);
    expect(await pollUntil(() => raws.every((r) => r.closed), 3000)).toBe(true);
    expect(listener.pendingSocketCount).toBe(0);
    expect(c.state).toBe('open');
  });

  it('a silent socket is still closed at the default upgrade timeout (5 s), not left to HTTP timeouts', async () => {
    const listener = await server();
    const [raw] = keep([await rawClient(listener.port)]);
    const t0 = Date.now();
    expect(await pollUntil(() => raw!.closed, 8000)).toBe(true);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(4500);
    expect(took).toBeLessThan(7500);
  }, 15_000);

  it('caps pending sockets per address and in total', async () => {
    const listener = await server({ admission: { maxPending: 16, maxPendingPerAddress: 4 } });
    const raws = keep([]);
    for (let a = 2; a < 8; a++) {
      for (let i = 0; i < 6; i++) raws.push(await rawClient(listener.port, `127.0.0.${a}`));
    }
    expect(await pollUntil(() => raws.filter((r) => !r.closed).length === 16, 2000)).toBe(true);
    expect(listener.pendingSocketCount).toBe(16);
    for (let a = 2; a < 8; a++) {
      expect(raws.filter((r) => !r.closed && r.socket.localAddress === `127.0.0.${a}`).length).toBeLessThanOrEqual(4);
    }
  });

  it('while 1,000 half-open connections arrive from other addresses and other ports of its own, a client connects within 1 s', async () => {
    const listener = await server();
    let opened = 0;
    let stop = false;
    const raws = keep([]);
    // 1,000 attackers: 800 from 127.0.0.2 … 127.0.0.41, 200 from other ports of 127.0.0.1; half of
    // them silent, half sending half an HTTP request. 50 connect at a time.
    const attack = (async () => {
      for (let i = 0; i < 1000 && !stop; i += 50) {
        const batch: Promise<RawClient>[] = [];
        for (let j = i; j < i + 50; j++) {
          const from = j % 5 === 0 ? '127.0.0.1' : `127.0.0.${2 + (j % 40)}`;
          batch.push(rawClient(listener.port, from, j % 2 === 0 ? '' : HALF_REQUEST));
        }
        for (const r of await Promise.all(batch)) {
          raws.push(r);
          opened++;
        }
      }
    })();
    expect(await pollUntil(() => opened >= 300, 10_000)).toBe(true);
    const t0 = performance.now();
    const c = client(listener.url);
    const ok = await pollUntil(() => c.state !== 'connecting', 5000);
    const took = performance.now() - t0;
    const during = opened;
    stop = true;
    await attack;
    expect(ok && c.state).toBe('open');
    expect(during).toBeLessThan(1000); // the flood was still arriving while the client connected
    expect(took).toBeLessThan(1000);
    expect(listener.pendingSocketCount).toBeLessThanOrEqual(64);
    // Attackers beyond the gate's 64 were closed at once, not held.
    expect(await pollUntil(() => raws.filter((r) => !r.closed).length <= 64, 3000)).toBe(true);
    // The client still works.
    let echoed = false;
    c.on('message', () => {
      echoed = true;
    });
    c.send('control', new Uint8Array([1]));
    expect(await pollUntil(() => echoed, 2000)).toBe(true);
  }, 30_000);

  it('upgraded sockets that never send HELLO stay pending: they do not fill maxConnections and time out', async () => {
    const listener = await server({ maxConnections: 2, upgradeTimeoutMs: 600 });
    const errors: string[] = [];
    listener.on('error', (e) => errors.push(e.code));
    const raws = keep([]);
    for (let a = 2; a < 7; a++) for (let i = 0; i < 4; i++) raws.push(await rawUpgrade(listener.port, `127.0.0.${a}`));
    expect(listener.pendingSocketCount).toBe(20);
    const t0 = performance.now();
    const cs = [client(listener.url), client(listener.url)];
    expect(await pollUntil(() => cs.every((c) => c.state === 'open'), 2000)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(listener.connections).toHaveLength(2);
    // A third is refused: the two places are taken by connections, not by the 20 silent sockets.
    const third = client(listener.url);
    expect(await pollUntil(() => third.state === 'closed', 2000)).toBe(true);
    // The silent ones are destroyed after upgradeTimeoutMs (connectMs is the default 5 s).
    expect(await pollUntil(() => raws.every((r) => r.closed), 3000)).toBe(true);
    expect(listener.pendingSocketCount).toBe(0);
    expect(cs.every((c) => c.state === 'open')).toBe(true);
    // The listener says why: 20 handshake timeouts (and the third client's `limit`).
    expect(errors.filter((c) => c === 'timeout')).toHaveLength(20);
    expect(listener.socketCount).toBe(2);
  });

  it('caps WebSocket connections per address (maxConnectionsPerAddress)', async () => {
    const listener = await server({ maxConnectionsPerAddress: 2 });
    const cs = [client(listener.url), client(listener.url), client(listener.url)];
    expect(await pollUntil(() => cs.every((c) => c.state !== 'connecting'), 3000)).toBe(true);
    expect(cs.filter((c) => c.state === 'open').length).toBe(2);
    expect(listener.socketCount).toBe(2);
  });
});
