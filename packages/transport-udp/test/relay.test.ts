import { createSocket, type Socket } from 'node:dgram';
import { pollUntil } from '@netplay/transport/conformance';
import { afterEach, describe, expect, it } from 'vitest';
import { UdpRelay } from '../src/relay.js';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c();
});

async function socket(): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  open.push(() => new Promise<void>((r) => s.close(() => r())));
  return s;
}

async function through(
  impairment: Parameters<UdpRelay['impair']>[0],
  count: number,
  seed = 1,
): Promise<{ got: number[]; relay: UdpRelay }> {
  const target = await socket();
  const client = await socket();
  const relay = await UdpRelay.start({ targetHost: '127.0.0.1', targetPort: target.address().port, seed });
  open.push(() => relay.close());
  relay.impair(impairment);
  const got: number[] = [];
  target.on('message', (m, rinfo) => {
    got.push(m[0]!);
    target.send(m, rinfo.port, rinfo.address); // echo back through the relay
  });
  for (let i = 0; i < count; i++) client.send(new Uint8Array([i]), relay.port, relay.host);
  await pollUntil(() => false, 150);
  return { got, relay };
}

describe('UdpRelay', () => {
  it('forwards everything both ways when clean', async () => {
    const target = await socket();
    const client = await socket();
    const relay = await UdpRelay.start({ targetHost: '127.0.0.1', targetPort: target.address().port, seed: 1 });
    open.push(() => relay.close());
    target.on('message', (m, r) => target.send(m, r.port, r.address));
    const echoed: number[] = [];
    client.on('message', (m) => echoed.push(m[0]!));
    for (let i = 0; i < 20; i++) client.send(new Uint8Array([i]), relay.port, relay.host);
    expect(await pollUntil(() => echoed.length === 20, 2000)).toBe(true);
    expect(echoed.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('drops everything at loss 1 or when cut, and counts it', async () => {
    const lossy = await through({ loss: 1 }, 10);
    expect(lossy.got).toEqual([]);
    expect(lossy.relay.stats.dropped).toBe(10);
    const cut = await through({ cut: true }, 10);
    expect(cut.got).toEqual([]);
  });

  it('duplicates every datagram at duplicate 1', async () => {
    const { got, relay } = await through({ duplicate: 1 }, 10);
    expect(got.length).toBe(20);
    expect(relay.stats.duplicated).toBeGreaterThanOrEqual(10);
  });

  it('the same seed drops the same datagrams', async () => {
    const a = await through({ loss: 0.5 }, 40, 77);
    const b = await through({ loss: 0.5 }, 40, 77);
    expect(a.got.length).toBeGreaterThan(5);
    expect(a.got.length).toBeLessThan(35);
    expect(a.got.sort((x, y) => x - y)).toEqual(b.got.sort((x, y) => x - y));
  });
});
