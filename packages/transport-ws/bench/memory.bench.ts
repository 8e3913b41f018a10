/**
 * Listener memory under attack (issue 13, finding 6): a netplay-ws listener in a child process
 * (so the RSS read is the listener's alone), 64 hostile connections from 64 loopback addresses,
 * each upgrading, sending a valid HELLO and then announcing a maximal message (the listener's
 * `maxPayload`) and sending all of it but the last byte. Figures: the child's RSS once the attack is in place, as a ratio to
 * the same listener idle (no connection) in the same run; default options, and the options this
 * package had before (16 MiB messages, no listener-wide receive cap) for comparison.
 */
import { fork } from 'node:child_process';
import { type Socket, connect as tcpConnect } from 'node:net';
import { BenchSuite } from '@netplay/bench-kit';
import { DEFAULT_MAX_MESSAGE_BYTES, encodeHello, UNRELIABLE_HEADER_BYTES } from '../src/server.js';

const CONNECTIONS = 64;
const MiB = 1 << 20;
const UPGRADE =
  'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
const CHUNK = new Uint8Array(MiB);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Report {
  rss: number;
  paused: number;
  receiveBufferBytes: number;
  sockets: number;
}

function header(length: number): Uint8Array {
  const hi = Math.floor(length / 2 ** 32);
  const lo = length >>> 0;
  return Uint8Array.from([
    0x82,
    0xff,
    0,
    0,
    hi >>> 8,
    hi & 0xff,
    lo >>> 24,
    (lo >>> 16) & 0xff,
    (lo >>> 8) & 0xff,
    lo & 0xff,
    0,
    0,
    0,
    0,
  ]);
}

/** The child's HELLO as a masked frame (mask key 0: the payload goes as it is). */
const HELLO = encodeHello({
  maxMessageBytes: 64 * MiB,
  maxUnreliableBytes: 1 << 16,
  channels: [{ name: 'control', kind: 'reliable' }],
});
const HELLO_FRAME = Uint8Array.from([0x82, 0x80 | HELLO.length, 0, 0, 0, 0, ...HELLO]);

/**
 * Upgrades, sends a valid HELLO (so the connection is past the handshake, as a real attacker's
 * would be), then announces `announce` payload bytes and sends `announce - 1` of them
 * (backpressure respected).
 */
async function hostile(port: number, from: string, announce: number): Promise<Socket> {
  const s = tcpConnect({ host: '127.0.0.1', port, localAddress: from });
  s.on('error', () => {});
  let head = '';
  await new Promise<void>((resolve) => {
    s.on('connect', () => s.write(UPGRADE));
    s.on('data', (d) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) resolve();
    });
    s.on('close', () => resolve());
  });
  if (!head.startsWith('HTTP/1.1 101')) return s;
  s.write(HELLO_FRAME);
  s.write(header(announce));
  void pump(s, announce - 1);
  return s;
}

/** Writes `left` bytes to `s` as fast as TCP takes them. */
async function pump(s: Socket, left: number): Promise<void> {
  while (left > 0 && !s.destroyed) {
    const n = Math.min(left, CHUNK.length);
    left -= n;
    if (!s.write(CHUNK.subarray(0, n))) {
      await new Promise<void>((r) => {
        const done = () => {
          s.off('drain', done);
          s.off('close', done);
          r();
        };
        s.on('drain', done);
        s.on('close', done);
      });
    }
  }
}

async function scenario(extra: Record<string, unknown>, attack: boolean): Promise<Report> {
  const child = fork(new URL('./listener-child.ts', import.meta.url), [JSON.stringify(extra)], {
    execArgv: ['--conditions=@netplay/source', '--expose-gc', '--import', 'tsx'],
  });
  const next = () =>
    new Promise<Record<string, number>>((r) => child.once('message', (m) => r(m as Record<string, number>)));
  const { port } = (await next()) as { port: number };
  const sockets: Socket[] = [];
  if (attack) {
    const max = ((extra.maxMessageBytes as number | undefined) ?? DEFAULT_MAX_MESSAGE_BYTES) + UNRELIABLE_HEADER_BYTES;
    const all: Promise<Socket>[] = [];
    for (let i = 0; i < CONNECTIONS; i++) all.push(hostile(port, `127.0.0.${2 + i}`, max));
    sockets.push(...(await Promise.all(all)));
  }
  // Let the listener read what it will read (the senders are done or held back by TCP), well
  // within the 5 s timeouts that close the hostile connections.
  await sleep(1500);
  child.send('report');
  const report = (await next()) as unknown as Report;
  for (const s of sockets) s.destroy();
  child.disconnect();
  await new Promise((r) => child.once('exit', r));
  return report;
}

const suite = new BenchSuite('transport-ws/memory');
const started = performance.now();
const OLD = { maxMessageBytes: 16 * MiB, maxReceiveBufferBytes: 2 ** 40, maxConnectionsPerAddress: 64 };
const idle = await scenario({}, false);
const attacked = await scenario({}, true);
const idleOld = await scenario(OLD, false);
const attackedOld = await scenario(OLD, true);

suite.record({ name: 'listener idle, default options: RSS', value: idle.rss / MiB, unit: 'MiB' });
suite.record({
  name: `64 hostile maximal messages, default options: RSS (${attacked.sockets} sockets, ${attacked.paused} paused, ${(attacked.receiveBufferBytes / MiB).toFixed(1)} MiB unfinished)`,
  value: attacked.rss / MiB,
  unit: 'MiB',
  baseline: 'listener idle, default options: RSS',
});
suite.record({ name: 'listener idle, previous defaults: RSS', value: idleOld.rss / MiB, unit: 'MiB' });
suite.record({
  name: `64 hostile maximal messages, previous defaults emulated (16 MiB, no total cap): RSS (${attackedOld.sockets} sockets kept)`,
  value: attackedOld.rss / MiB,
  unit: 'MiB',
  baseline: 'listener idle, previous defaults: RSS',
});
suite.record({
  name: 'growth over idle, default options',
  value: (attacked.rss - idle.rss) / MiB,
  unit: 'MiB',
});
suite.record({
  name: 'growth over idle, previous defaults',
  value: (attackedOld.rss - idleOld.rss) / MiB,
  unit: 'MiB',
});
suite.finish();
console.log(`(RSS of the listener's own process, after a GC; ${((performance.now() - started) / 1000).toFixed(1)} s)`);
