/**
 * UDP transport on loopback: 16-byte message throughput and one-way latency against raw
 * node:dgram measured in the same run, and the time to move 1 MiB reliably through the seeded
 * relay at 0 %, 2 % and 10 % loss. Benchmarks may read wall time; the library does not.
 */
import { createSocket, type Socket } from 'node:dgram';
import { BenchSuite } from '@netplay/bench-kit';
import { type ChannelSpec, type Connection, Prng } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { UdpRelay } from '../src/relay.js';
import { connectUdp, listenUdp } from '../src/socket.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'bulk', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const MESSAGE = 16;
const THROUGHPUT_MS = 1000;
const PER_TURN = 64;
const LATENCY_MESSAGES = 1000;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** A sender/receiver pair behind one interface: raw dgram or a Connection channel. */
interface Pipe {
  send(data: Uint8Array): void;
  onMessage(fn: (data: Uint8Array) => void): void;
  /** Whether the sender should hold back (its queue is long). */
  backedUp(): boolean;
  /** Datagrams sent so far, both ways. */
  datagrams(): number;
  close(): Promise<void>;
}

/**
 * Raw dgram from one socket to another. With `replyEvery`, the receiver also answers every
 * `replyEvery`-th datagram with a 27-byte one (the size of an ack-only packet with a full bitfield), so the pair makes
 * as many syscalls as a reliable channel that acknowledges every 16 packets.
 */
async function rawPipe(replyEvery = 0, connected = false): Promise<Pipe> {
  const rx = createSocket('udp4');
  const tx = createSocket('udp4');
  await new Promise<void>((r) => rx.bind(0, '127.0.0.1', r));
  await new Promise<void>((r) => tx.bind(0, '127.0.0.1', r));
  for (const s of [rx, tx]) {
    s.setRecvBufferSize(4 << 20);
    s.setSendBufferSize(4 << 20);
  }
  const port = rx.address().port;
  const txPort = tx.address().port;
  // Connected: no address lookup per send and no completion callback (what the UDP client does).
  if (connected) await new Promise<void>((r) => tx.connect(port, '127.0.0.1', r));
  let inFlight = 0;
  let sent = 0;
  let received = 0;
  const reply = new Uint8Array(27);
  if (replyEvery > 0) {
    tx.on('message', () => {});
    rx.on('message', () => {
      if (++received % replyEvery === 0) {
        sent++;
        rx.send(reply, txPort, '127.0.0.1');
      }
    });
  }
  return {
    send(data) {
      sent++;
      if (connected) {
        tx.send(data);
        return;
      }
      inFlight++;
      tx.send(data, port, '127.0.0.1', () => inFlight--);
    },
    onMessage(fn) {
      rx.on('message', (m) => fn(m));
    },
    backedUp: () => inFlight > 4096 || (connected && tx.getSendQueueCount() > 4096),
    datagrams: () => sent,
    close: async () => {
      await Promise.all([rx, tx].map((s: Socket) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}

async function udpPipe(channel: 'input' | 'bulk' | 'state'): Promise<Pipe> {
  const listener = await listenUdp({ channels, rateLimits: false });
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server = c;
  });
  const client = await connectUdp({ channels, host: '127.0.0.1', port: listener.port, rateLimits: false });
  await pollUntil(() => server !== undefined, 2000);
  return {
    send: (data) => client.send(channel, data),
    onMessage(fn) {
      server!.on('message', (m) => fn(m.data));
    },
    backedUp: () => client.stats.sendQueueLength > 20_000,
    datagrams: () => client.stats.packetsSent + (server?.stats.packetsSent ?? 0),
    close: async () => {
      client.close();
      await pollUntil(() => client.finished, 2000);
      listener.close();
      await listener.closed;
    },
  };
}

/** Per labelled throughput run: datagrams and process CPU microseconds per delivered message. */
const datagramsPerMessage = new Map<string, number[]>();
const cpuPerMessage = new Map<string, number[]>();
const push = (m: Map<string, number[]>, label: string, x: number) => m.set(label, [...(m.get(label) ?? []), x]);

async function throughput(pipe: Pipe, perTurn = PER_TURN, label = '', size = MESSAGE): Promise<number> {
  let received = 0;
  pipe.onMessage(() => received++);
  const msg = new Uint8Array(size);
  const d0 = pipe.datagrams();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < THROUGHPUT_MS) {
    if (!pipe.backedUp()) for (let i = 0; i < perTurn; i++) pipe.send(msg);
    await turn();
  }
  const counted = received;
  if (label) {
    const cpu = process.cpuUsage(cpu0);
    push(datagramsPerMessage, label, (pipe.datagrams() - d0) / Math.max(1, counted));
    push(cpuPerMessage, label, (cpu.user + cpu.system) / Math.max(1, counted));
  }
  await pipe.close();
  return (counted * 1000) / THROUGHPUT_MS;
}

/** Sends `count` timestamped messages, one per ms, and collects one-way latencies into `samples`. */
async function latency(pipe: Pipe, count: number, samples: number[]): Promise<void> {
  pipe.onMessage((data) => {
    const sent = new DataView(data.buffer, data.byteOffset, data.byteLength).getFloat64(0);
    samples.push(performance.now() - sent);
  });
  const msg = new Uint8Array(MESSAGE);
  const view = new DataView(msg.buffer);
  for (let i = 0; i < count; i++) {
    view.setFloat64(0, performance.now());
    pipe.send(msg);
    await sleep(1);
  }
  await sleep(100);
  await pipe.close();
}

async function transferTime(loss: number, seed: number): Promise<number> {
  const listener = await listenUdp({ channels, rateLimits: false });
  const relay = await UdpRelay.start({ targetHost: '127.0.0.1', targetPort: listener.port, seed });
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server = c;
  });
  const client = await connectUdp({ channels, host: relay.host, port: relay.port, rateLimits: false });
  await pollUntil(() => server !== undefined, 2000);
  relay.impair({ loss });
  const data = new Prng(seed).fill(new Uint8Array(1 << 20));
  let done = -1;
  server!.on('message', (m) => {
    if (m.data.length === data.length) done = performance.now();
  });
  const t0 = performance.now();
  client.send('bulk', data);
  await pollUntil(() => done >= 0, 60_000, 1);
  const ms = done - t0;
  client.close();
  await pollUntil(() => client.finished, 2000);
  listener.close();
  await relay.close();
  await listener.closed;
  if (ms < 0) throw new Error(`1 MiB did not arrive at ${loss * 100} % loss`);
  return ms;
}

const suite = new BenchSuite('transport-udp/loopback');

// Throughput rounds alternate between the cases so that load from other processes hits them alike;
// each figure is the median of ROUNDS runs.
const ROUNDS = 3;
const cases = {
  raw: [] as number[],
  reliable: [] as number[],
  unreliable: [] as number[],
  raw1: [] as number[],
  raw1ack: [] as number[],
  reliable1: [] as number[],
  raw1k: [] as number[],
  rawConnected1k: [] as number[],
  reliable1k: [] as number[],
};
for (let r = 0; r < ROUNDS; r++) {
  cases.raw.push(await throughput(await rawPipe()));
  cases.reliable.push(await throughput(await udpPipe('input')));
  cases.unreliable.push(await throughput(await udpPipe('state')));
  // One message per event-loop turn: every message becomes its own datagram on both sides, so
  // this pair shows the per-datagram cost of the reliable layer (acks, CRC, bookkeeping).
  cases.raw1.push(await throughput(await rawPipe(), 1, 'raw1'));
  // The same with as many datagrams as the reliable channel sends: the syscall floor.
  cases.raw1ack.push(await throughput(await rawPipe(16), 1, 'raw1ack'));
  cases.reliable1.push(await throughput(await udpPipe('input'), 1, 'reliable1'));
}
// 1 KiB messages, 16 per turn: one datagram each for raw dgram; the reliable channel puts one
// (1 KiB + headers fit one 1200-byte datagram) in each, acknowledged every 16 packets. More rounds:
// this ratio swings most with the load of the machine.
const ROUNDS_1K = 5;
for (let r = 0; r < ROUNDS_1K; r++) {
  cases.raw1k.push(await throughput(await rawPipe(), 16, 'raw1k', 1024));
  cases.reliable1k.push(await throughput(await udpPipe('bulk'), 16, 'reliable1k', 1024));
  cases.rawConnected1k.push(await throughput(await rawPipe(0, true), 16, 'rawConnected1k', 1024));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

suite.record({ name: 'raw dgram 16 B msgs', value: median(cases.raw), unit: 'msg/s' });
suite.record({
  name: 'UDP reliable 16 B msgs',
  value: median(cases.reliable),
  unit: 'msg/s',
  baseline: 'raw dgram 16 B msgs',
  note: `goal >= 0.5; ${PER_TURN} msgs per event-loop turn, batched into datagrams`,
});
suite.record({
  name: 'UDP unreliable 16 B msgs',
  value: median(cases.unreliable),
  unit: 'msg/s',
  baseline: 'raw dgram 16 B msgs',
});
suite.record({ name: 'raw dgram 1 KiB msgs, 16/turn', value: median(cases.raw1k), unit: 'msg/s' });
suite.record({
  name: 'UDP reliable 1 KiB msgs, 16/turn',
  value: median(cases.reliable1k),
  unit: 'msg/s',
  baseline: 'raw dgram 1 KiB msgs, 16/turn',
  note: `goal ≥ 0.7; ${median(datagramsPerMessage.get('reliable1k') ?? [0]).toFixed(2)} datagrams/msg, rounds ${cases.reliable1k.map((x, i) => (x / cases.raw1k[i]!).toFixed(2)).join(' / ')}`,
});
suite.record({
  name: 'raw dgram 1 KiB msgs, connected socket, 16/turn',
  value: median(cases.rawConnected1k),
  unit: 'msg/s',
  baseline: 'raw dgram 1 KiB msgs, 16/turn',
  note: 'no address lookup and no callback per send: the send path the UDP client uses',
});
suite.record({
  name: 'UDP reliable 1 KiB vs raw connected socket',
  value: median(cases.reliable1k),
  unit: 'msg/s',
  baseline: 'raw dgram 1 KiB msgs, connected socket, 16/turn',
  note: `the stricter baseline; rounds ${cases.reliable1k.map((x, i) => (x / cases.rawConnected1k[i]!).toFixed(2)).join(' / ')}`,
});
suite.record({
  name: 'CPU per msg: raw dgram 1 KiB, 16/turn',
  value: median(cpuPerMessage.get('raw1k') ?? [Number.NaN]),
  unit: 'us',
});
suite.record({
  name: 'CPU per msg: UDP reliable 1 KiB, 16/turn',
  value: median(cpuPerMessage.get('reliable1k') ?? [Number.NaN]),
  unit: 'us',
  baseline: 'CPU per msg: raw dgram 1 KiB, 16/turn',
  note: 'both ends, process CPU (user + system) per delivered message',
});
suite.record({ name: 'raw dgram, 1 msg/turn', value: median(cases.raw1), unit: 'msg/s' });
const dpm = (label: string) => median(datagramsPerMessage.get(label) ?? [Number.NaN]).toFixed(2);
suite.record({
  name: 'raw dgram + a reply per 16, 1 msg/turn',
  value: median(cases.raw1ack),
  unit: 'msg/s',
  baseline: 'raw dgram, 1 msg/turn',
  note: `${dpm('raw1ack')} datagrams per message: the reliable channel's syscall count`,
});
suite.record({
  name: 'UDP reliable, 1 msg/turn',
  value: median(cases.reliable1),
  unit: 'msg/s',
  baseline: 'raw dgram, 1 msg/turn',
  note: `one datagram per message; ${dpm('reliable1')} datagrams per message with the acks (one per 16 tracked packets or per tick)`,
});
suite.record({
  name: 'UDP reliable vs raw + replies, 1 msg/turn',
  value: median(cases.reliable1),
  unit: 'msg/s',
  baseline: 'raw dgram + a reply per 16, 1 msg/turn',
  note: 'what is left is the reliable layer itself',
});
// CPU time per message (user + system, whole process) is steadier than throughput on a loaded
// machine and shows where the time goes: syscalls and libuv, or the reliable layer.
const cpu = (label: string) => median(cpuPerMessage.get(label) ?? [Number.NaN]);
suite.record({ name: 'CPU per msg: raw dgram, 1 msg/turn', value: cpu('raw1'), unit: 'us' });
suite.record({
  name: 'CPU per msg: raw + a reply per 16',
  value: cpu('raw1ack'),
  unit: 'us',
  baseline: 'CPU per msg: raw dgram, 1 msg/turn',
});
suite.record({
  name: 'CPU per msg: UDP reliable, 1 msg/turn',
  value: cpu('reliable1'),
  unit: 'us',
  baseline: 'CPU per msg: raw + a reply per 16',
});

// Latency rounds alternate between the cases too; samples of all rounds are pooled.
const latencyCases = [
  ['raw dgram', () => rawPipe()],
  ['UDP reliable', () => udpPipe('input')],
  ['UDP unreliable', () => udpPipe('state')],
] as const;
const pooled = new Map<string, number[]>(latencyCases.map(([name]) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, make] of latencyCases) {
    await latency(await make(), Math.ceil(LATENCY_MESSAGES / ROUNDS), pooled.get(name)!);
  }
}
for (const [name] of latencyCases) {
  const samples = pooled.get(name)!.sort((a, b) => a - b);
  const sent = Math.ceil(LATENCY_MESSAGES / ROUNDS) * ROUNDS;
  suite.record({
    name: `${name} one-way median`,
    value: percentile(samples, 0.5),
    unit: 'ms',
    ...(name === 'raw dgram' ? {} : { baseline: 'raw dgram one-way median' }),
    note: `${samples.length}/${sent} delivered, 1 msg/ms, same process and clock`,
  });
  suite.record({
    name: `${name} one-way p99`,
    value: percentile(samples, 0.99),
    unit: 'ms',
    ...(name === 'raw dgram' ? {} : { baseline: 'raw dgram one-way p99' }),
  });
}

for (const loss of [0, 0.02, 0.1]) {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push(await transferTime(loss, 100 + i));
  runs.sort((a, b) => a - b);
  suite.record({
    name: `1 MiB via relay, ${loss * 100} % loss`,
    value: runs[2]!,
    unit: 'ms',
    ...(loss === 0 ? {} : { baseline: '1 MiB via relay, 0 % loss' }),
    note: `median of 5; ${((1 << 20) / 1e6 / (runs[2]! / 1000)).toFixed(1)} MB/s`,
  });
}

suite.finish();
