/**
 * transport-ws on loopback: 16-byte messages, client → server, both ends in this process.
 * - throughput: messages/s for a burst of N messages (the sender keeps the socket buffer under
 *   1 MiB by yielding to the event loop), netplay-ws reliable and unreliable channels vs raw `ws`;
 * - one-way latency: one message in flight at a time (the next is sent when the previous arrived),
 *   send and receive timestamps from `performance.now()` in the same process; median and p99.
 * Raw `ws` (same options: no compression, binary frames) is measured in the same run as baseline.
 */
import { BenchSuite } from '@netplay/bench-kit';
import type { Connection } from '@netplay/transport';
import { ManualClock } from '@netplay/transport';
import { WebSocket, WebSocketServer } from 'ws';
import {
  WsConnection as Core,
  connectNode,
  encodeHello,
  encodeWelcome,
  listen,
  type WsConnection,
  type WsSocket,
} from '../src/server.js';

const MSG = 16;
const N = 100_000;
const LAT_N = 3_000;
const RUNS = 5;
const HIGH_WATER = 1 << 20;

const tick = () => new Promise<void>((r) => setImmediate(r));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
};

/** A sender/receiver pair as seen by the measurement loops. */
interface Link {
  send(data: Uint8Array): void;
  buffered(): number;
  onMessage(fn: (data: Uint8Array) => void): void;
  close(): Promise<void>;
}

async function rawLink(): Promise<Link> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const addr = wss.address();
  if (typeof addr === 'string' || addr === null) throw new Error('unexpected address');
  let handler: (d: Uint8Array) => void = () => {};
  let serverSide: WebSocket | undefined;
  wss.on('connection', (ws) => {
    serverSide = ws;
    ws.on('message', (d) => handler(d as Buffer));
  });
  const client = new WebSocket(`ws://127.0.0.1:${addr.port}`, { perMessageDeflate: false });
  await new Promise<void>((r) => client.once('open', () => r()));
  while (!serverSide) await tick();
  return {
    send: (d) => client.send(d, { binary: true }),
    buffered: () => client.bufferedAmount,
    onMessage: (fn) => {
      handler = fn;
    },
    close: async () => {
      client.terminate();
      serverSide?.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

async function netplayLink(channel: 'r' | 'u'): Promise<Link> {
  const channels = [
    { name: 'r', kind: 'reliable' as const },
    { name: 'u', kind: 'unreliable' as const },
  ];
  // A high-water mark above the bench's own pacing, so unreliable messages are not replaced.
  const listener = await listen({ channels, highWaterBytes: 4 * HIGH_WATER, rateLimits: false });
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server = c;
  });
  const client: WsConnection = connectNode(listener.url, {
    channels,
    highWaterBytes: 4 * HIGH_WATER,
    rateLimits: false,
  });
  while (client.state === 'connecting' || !server) await tick();
  let handler: (d: Uint8Array) => void = () => {};
  server.on('message', (m) => handler(m.data));
  return {
    send: (d) => client.send(channel, d),
    buffered: () => client.bufferedAmount,
    onMessage: (fn) => {
      handler = fn;
    },
    close: async () => {
      client.close();
      listener.close();
      await listener.whenClosed();
    },
  };
}

/** Messages/s for N messages, plus the one-way latency of each message under that load. */
async function throughput(link: Link): Promise<number> {
  let received = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  link.onMessage(() => {
    if (++received === N) done();
  });
  const msg = new Uint8Array(MSG);
  const t0 = performance.now();
  let sent = 0;
  const deadline = t0 + 20_000;
  while (sent < N && performance.now() < deadline) {
    while (sent < N && link.buffered() < HIGH_WATER) {
      msg[0] = sent & 0xff;
      link.send(msg);
      sent++;
      if ((sent & 1023) === 0) break;
    }
    await tick();
  }
  await Promise.race([finished, new Promise((r) => setTimeout(r, 20_000))]);
  const dt = performance.now() - t0;
  if (received !== N) throw new Error(`only ${received} of ${N} messages arrived`);
  return (N * 1000) / dt;
}

async function latency(link: Link): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  const msg = new Uint8Array(MSG);
  const view = new DataView(msg.buffer);
  let arrived: (() => void) | undefined;
  link.onMessage((d) => {
    samples.push(performance.now() - new DataView(d.buffer, d.byteOffset, d.byteLength).getFloat64(0));
    arrived?.();
  });
  for (let i = 0; i < LAT_N; i++) {
    const p = new Promise<void>((r) => {
      arrived = r;
    });
    view.setFloat64(0, performance.now());
    link.send(msg);
    await Promise.race([p, new Promise((r) => setTimeout(r, 1000))]);
  }
  if (samples.length < LAT_N) throw new Error(`only ${samples.length} of ${LAT_N} latency samples`);
  return { p50: median(samples), p99: pct(samples, 0.99) };
}

interface Result {
  rate: number;
  p50: number;
  p99: number;
}

async function once(make: () => Promise<Link>, results: Result[] | undefined): Promise<void> {
  // Let the previous run's sockets close and its garbage go, so run order does not bias figures.
  await new Promise((r) => setTimeout(r, 100));
  (globalThis as { gc?: () => void }).gc?.();
  const link = await make();
  try {
    const rate = await throughput(link);
    const l = await latency(link);
    results?.push({ rate, ...l });
  } finally {
    await link.close();
  }
}

const summarize = (rs: Result[]): Result => ({
  rate: median(rs.map((r) => r.rate)),
  p50: median(rs.map((r) => r.p50)),
  p99: median(rs.map((r) => r.p99)),
});

const suite = new BenchSuite('transport-ws/loopback');
const started = performance.now();

// ---- the core alone (no I/O): cost and allocation per 16-byte message ----
{
  const channels = [{ name: 'r', kind: 'reliable' as const }];
  const sink: WsSocket = { bufferedAmount: 0, send() {}, close() {}, terminate() {} };
  const clock = new ManualClock();
  const client = new Core(sink, 'client', 'bench', { channels, clock });
  client.socketOpened();
  client.socketFrame(encodeWelcome({ maxMessageBytes: 1 << 20, maxUnreliableBytes: 1 << 16 }));
  const server = new Core(sink, 'server', 'bench', { channels, clock });
  server.socketFrame(encodeHello({ maxMessageBytes: 1 << 20, maxUnreliableBytes: 1 << 16, channels }));
  let seen = 0;
  server.on('message', (m) => {
    seen += m.data.length;
  });
  const msg = new Uint8Array(MSG);
  const frame = new Uint8Array(MSG + 2);
  frame[0] = 0x01;
  suite.measure(
    'baseline: allocate an 18-byte frame and copy 16 bytes in',
    () => {
      const f = new Uint8Array(MSG + 2);
      f.set(msg, 2);
      seen += f[0]!;
    },
    { batch: 1 },
  );
  suite.measure('core send (frame + stats, socket is a no-op)', () => client.send('r', msg), {
    baseline: 'baseline: allocate an 18-byte frame and copy 16 bytes in',
  });
  suite.measure(
    'baseline: a 16-byte view and a handler call',
    () => {
      const v = new Uint8Array(frame.buffer, 2, MSG);
      seen += v.length;
    },
    { batch: 1 },
  );
  suite.measure('core receive (parse, checks, message event)', () => server.socketFrame(frame), {
    baseline: 'baseline: a 16-byte view and a handler call',
  });
  if (seen === 0) throw new Error('nothing measured');
  client.close();
  server.close();
}

const kinds = [
  { make: rawLink, results: [] as Result[] },
  { make: () => netplayLink('r'), results: [] as Result[] },
  { make: () => netplayLink('u'), results: [] as Result[] },
];
// One warm-up round (JIT), then RUNS rounds with the three kinds interleaved; medians reported.
for (const k of kinds) await once(k.make, undefined);
for (let run = 0; run < RUNS; run++) for (const k of kinds) await once(k.make, k.results);
const [raw, rel, unrel] = kinds.map((k) => summarize(k.results)) as [Result, Result, Result];

suite.record({ name: 'raw ws: 16 B messages', value: raw.rate, unit: 'msg/s' });
suite.record({
  name: 'netplay-ws reliable: 16 B messages',
  value: rel.rate,
  unit: 'msg/s',
  baseline: 'raw ws: 16 B messages',
});
suite.record({
  name: 'netplay-ws unreliable: 16 B messages',
  value: unrel.rate,
  unit: 'msg/s',
  baseline: 'raw ws: 16 B messages',
});
for (const [label, r] of [
  ['raw ws', raw],
  ['netplay-ws reliable', rel],
  ['netplay-ws unreliable', unrel],
] as const) {
  const base = label === 'raw ws' ? undefined : raw;
  // Latency: lower is better, so the ratio is baseline / value (1.0 = as fast as raw ws).
  suite.record({
    name: `${label}: one-way latency p50`,
    value: r.p50 * 1000,
    unit: 'µs',
    ...(base ? { baseline: 'raw ws: one-way latency p50', ratio: base.p50 / r.p50 } : {}),
  });
  suite.record({
    name: `${label}: one-way latency p99`,
    value: r.p99 * 1000,
    unit: 'µs',
    ...(base ? { baseline: 'raw ws: one-way latency p99', ratio: base.p99 / r.p99 } : {}),
  });
}
suite.finish();
console.log(
  `(latency ratios are raw / netplay-ws: 1.0 means as fast as raw ws; ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
