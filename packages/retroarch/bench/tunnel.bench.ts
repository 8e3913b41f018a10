/**
 * The tunnel relay on loopback, next to a direct TCP connection measured in the same run:
 * throughput (MB/s, 64 MiB one way in 64 KiB writes) and round-trip time (a 20-byte message
 * echoed back, median of 2,000), plus the relay's heap per idle session. The relay runs in the
 * same process as both ends, so its copy competes with them for one thread: the ratios are a
 * floor for a relay on its own machine.
 */
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { BenchSuite } from '@netplay/bench-kit';
import { encodeTunnelMessage, tunnelIdHex } from '../src/index.js';
import { listenRetroArchTunnel, type RetroArchTunnel } from '../src/node.js';

const suite = new BenchSuite('retroarch/tunnel');
const TOTAL = 64 * 1024 * 1024;
const CHUNK = randomBytes(64 * 1024);
const ROUND_TRIPS = 2000;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1' }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

function firstBytes(s: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    const on = (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= n) {
        s.off('data', on);
        resolve(got);
      }
    };
    s.on('data', on);
  });
}

/** A connected pair of sockets: direct (a listener of ours) or through the relay (fake host + link). */
async function pair(relay: RetroArchTunnel | undefined): Promise<{ a: Socket; b: Socket; done: () => void }> {
  if (relay === undefined) {
    const accepted = new Promise<Socket>((resolve) => {
      server = createServer((s) => {
        s.setNoDelay(true);
        resolve(s);
      });
      server.listen(0, '127.0.0.1');
    });
    await new Promise((r) => server!.once('listening', r));
    const a = await open((server!.address() as AddressInfo).port);
    const b = await accepted;
    return { a, b, done: () => server!.close() };
  }
  const host = await open(relay.port);
  const granted = firstBytes(host, 16);
  host.write(encodeTunnelMessage({ type: 'session', id: new Uint8Array(12) }));
  const id = (await granted).subarray(4, 16);
  const a = await open(relay.port);
  const told = firstBytes(host, 16);
  a.write(encodeTunnelMessage({ type: 'session', id }));
  const clientId = (await told).subarray(4, 16);
  const b = await open(relay.port);
  b.write(encodeTunnelMessage({ type: 'link', id: clientId }));
  await new Promise((r) => setTimeout(r, 20));
  return { a, b, done: () => host.destroy() };
}
let server: Server | undefined;

async function throughput(relay: RetroArchTunnel | undefined): Promise<number> {
  const { a, b, done } = await pair(relay);
  const t0 = performance.now();
  const received = new Promise<void>((resolve) => {
    let n = 0;
    b.on('data', (d: Buffer) => {
      n += d.length;
      if (n >= TOTAL) resolve();
    });
  });
  for (let sent = 0; sent < TOTAL; sent += CHUNK.length) {
    if (!a.write(CHUNK)) await new Promise((r) => a.once('drain', r));
  }
  await received;
  const ms = performance.now() - t0;
  a.destroy();
  b.destroy();
  done();
  return TOTAL / 1e6 / (ms / 1000);
}

async function roundTrip(relay: RetroArchTunnel | undefined): Promise<number> {
  const { a, b, done } = await pair(relay);
  b.on('data', (d: Buffer) => b.write(d));
  const msg = randomBytes(20);
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    const back = firstBytes(a, 20);
    a.write(msg);
    await back;
    times.push(performance.now() - t0);
  }
  a.destroy();
  b.destroy();
  done();
  times.sort((x, y) => x - y);
  return (times[times.length >> 1] ?? 0) * 1000;
}

async function main(): Promise<void> {
  const relay = await listenRetroArchTunnel({ port: 0, sessionRateLimits: false });
  const direct = await throughput(undefined);
  const relayed = await throughput(relay);
  suite.record({ name: 'direct TCP, 64 MiB one way', value: direct, unit: 'MB/s', note: 'baseline' });
  suite.record({
    name: 'through the relay, 64 MiB one way',
    value: relayed,
    unit: 'MB/s',
    baseline: 'direct TCP, 64 MiB one way',
    note: 'relay in the same process as both ends',
  });
  const rttDirect = await roundTrip(undefined);
  const rttRelay = await roundTrip(relay);
  suite.record({ name: 'direct TCP round trip (20 B)', value: rttDirect, unit: 'µs', note: 'baseline, median' });
  suite.record({
    name: 'round trip through the relay (20 B)',
    value: rttRelay,
    unit: 'µs',
    baseline: 'direct TCP round trip (20 B)',
    note: `median of ${ROUND_TRIPS}; ratio > 1 = slower; added ${(rttRelay - rttDirect).toFixed(0)} µs`,
  });

  // Heap per idle session: 200 fake hosts.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const hosts: Socket[] = [];
  const many = await listenRetroArchTunnel({ port: 0, maxSessions: 1000, maxSessionsPerAddress: 1000 });
  for (let i = 0; i < 200; i++) {
    const h = await open(many.port);
    const granted = firstBytes(h, 16);
    h.write(encodeTunnelMessage({ type: 'session', id: new Uint8Array(12) }));
    tunnelIdHex((await granted).subarray(4, 16));
    hosts.push(h);
  }
  gc?.();
  const perSession = (process.memoryUsage().heapUsed - before) / 200;
  suite.record({
    name: 'heap per idle session (relay and host socket objects)',
    value: Math.round(perSession),
    unit: 'bytes',
    note: 'both ends in this process: an upper bound for the relay alone',
  });
  for (const h of hosts) h.destroy();
  await many.close();
  await relay.close();
  suite.finish();
}

await main();
