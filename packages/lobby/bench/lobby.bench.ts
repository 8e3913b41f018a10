/**
 * The lobby, one node vs two nodes behind one Redis (issue 18). Every node is its own process
 * (bench/node-child.ts); the load comes from this process over loopback. Rows:
 * - rooms announced per second (POST /rooms, 32 at a time, spread over the nodes) and filtered
 *   lists per second (GET /rooms?game=…) over 2,000 rooms;
 * - signaling messages per second: 8 peer pairs, each sending candidate signals to its partner
 *   (with two nodes the partner is on the other node: every message crosses Redis pub/sub);
 * - relay: 16 MiB in 64 KiB reliable netplay-ws messages and a 16 B ping-pong through the relay
 *   vs the same connection direct to the host's listener (the baseline); a transport-udp 16 B
 *   ping-pong through the relay's UDP room port vs direct;
 * - memory per room: node heap (in memory) and Redis used_memory, per room.
 * Baselines: the in-memory single node for the API rows; one node on Redis for the two-node rows
 * (the scale-out ratio); the direct connection for the relay rows. Redis rows need redis-server
 * (Debian package `redis-server`); without it they are skipped, said in the output.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BenchSuite } from '@netplay/bench-kit';
import type { Connection } from '@netplay/transport';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import { SignalingClient } from '@netplay/transport-webrtc/server';
import { connectNode, listen } from '@netplay/transport-ws/server';
import { createClient } from '@redis/client';
import { WebSocket } from 'ws';
import { hostThroughRelay, LobbyClient, type RoomAnnounce } from '../src/node.js';
import { findRedisServer, RedisProcess } from '../test/redis-server.js';

const ROOMS = 2000;
const LISTS = 300;
const PAIRS = 8;
const SIGNALS = 1500;
const RELAY_BYTES = 16 << 20;
const PINGS = 300;
const child = fileURLToPath(new URL('./node-child.ts', import.meta.url));
const WS = WebSocket as unknown as NonNullable<Parameters<typeof SignalingClient.join>[0]['WebSocket']>;
const channels = [{ name: 'data', kind: 'reliable' }] as const;

interface Node {
  url: string;
  proc: ChildProcess;
}

async function startNode(redis: string | undefined, prefix: string, id: string): Promise<Node> {
  const proc = fork(child, [redis ?? '-', prefix, id], {
    execArgv: ['--conditions=@netplay/source', '--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.once('message', (m) => resolve((m as { url: string }).url));
    proc.once('exit', (c) => reject(new Error(`node ${id} exited ${c}`)));
  });
  return { url, proc };
}

async function heapOf(n: Node): Promise<number> {
  return new Promise((resolve) => {
    n.proc.once('message', (m) => resolve((m as { heap: number }).heap));
    n.proc.send('mem');
  });
}

async function stopNode(n: Node): Promise<void> {
  await new Promise<void>((resolve) => {
    n.proc.once('exit', () => resolve());
    n.proc.send('exit');
    setTimeout(() => n.proc.kill('SIGKILL'), 3000).unref();
  });
}

function body(i: number): RoomAnnounce {
  return {
    name: `room ${i}`,
    game: `g${i % 50}`,
    core: 'chip8',
    mode: 'rollback',
    hasPassword: i % 3 === 0,
    players: 1,
    slots: 2,
    endpoints: [{ kind: 'webrtc', peer: 'host' }],
  };
}

async function pool(n: number, width: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

function opened(c: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    c.on('open', () => resolve());
    c.on('close', (e) => reject(new Error(`${e.code} ${e.reason}`)));
  });
}

interface Figures {
  announcesPerS: number;
  listsPerS: number;
  signalsPerS: number;
  heapPerRoom: number;
  relayMBs: number;
  directMBs: number;
  relayRttUs: number;
  directRttUs: number;
  udpRelayRttUs: number;
  udpDirectRttUs: number;
}

async function measure(nodes: Node[]): Promise<Figures> {
  const clients = nodes.map((n) => new LobbyClient(n.url));
  const heap0 = await heapOf(nodes[0] as Node);
  let t = performance.now();
  await pool(ROOMS, 32, (i) => (clients[i % clients.length] as LobbyClient).create(body(i)));
  const announcesPerS = ROOMS / ((performance.now() - t) / 1000);
  const heapPerRoom = ((await heapOf(nodes[0] as Node)) - heap0) / ROOMS;
  t = performance.now();
  await pool(LISTS, 8, async (i) => {
    const rooms = await (clients[i % clients.length] as LobbyClient).list({ game: `g${i % 50}` });
    if (rooms.length !== ROOMS / 50) throw new Error(`list gave ${rooms.length}`);
  });
  const listsPerS = LISTS / ((performance.now() - t) / 1000);

  // Signaling: pair p's host joins on node 0, its guest on the last node.
  const sig = (n: Node) => `${n.url.replace('http', 'ws')}/signal`;
  const pairs = [];
  for (let p = 0; p < PAIRS; p++) {
    const host = await SignalingClient.join({
      url: sig(nodes[0] as Node),
      room: `bench-${p}`,
      peer: 'host',
      WebSocket: WS,
    });
    const guest = await SignalingClient.join({
      url: sig(nodes[nodes.length - 1] as Node),
      room: `bench-${p}`,
      peer: 'guest',
      WebSocket: WS,
    });
    pairs.push({ host, guest });
  }
  await new Promise((r) => setTimeout(r, 200)); // let the join events cross Redis
  t = performance.now();
  await Promise.all(
    pairs.map(
      ({ host, guest }) =>
        new Promise<void>((resolve) => {
          let got = 0;
          host.on('signal', () => {
            if (++got === SIGNALS) resolve();
          });
          for (let i = 0; i < SIGNALS; i++) {
            guest.send('host', {
              kind: 'candidate',
              candidate: `candidate:${i} 1 udp 1 127.0.0.1 9 typ host`,
              sdpMid: '0',
              sdpMLineIndex: 0,
            });
          }
        }),
    ),
  );
  const signalsPerS = (PAIRS * SIGNALS) / ((performance.now() - t) / 1000);
  for (const { host, guest } of pairs) {
    host.close();
    guest.close();
  }

  // Relay: the host registers with node 0; the client takes the relay URL from the last node's join info.
  const sink = await listen({ channels, port: 0, host: '127.0.0.1', rateLimits: false });
  let received = 0;
  sink.on('connection', (c) =>
    c.on('message', ({ data }) => {
      if (data.length <= 16) c.send('data', data);
      else received += data.length;
    }),
  );
  const created = await (clients[0] as LobbyClient).create({ ...body(0), endpoints: [] });
  const reg = hostThroughRelay({
    relayUrl: (nodes[0] as Node).url.replace('http', 'ws'),
    room: created.room.id,
    token: created.token,
    target: sink.url,
  });
  await reg.registered;
  let relayUrl: string | undefined;
  while (!relayUrl) relayUrl = (await (clients[clients.length - 1] as LobbyClient).join(created.room.id)).relay?.url;
  const run = async (url: string) => {
    const conn = connectNode(url, { channels, rateLimits: false });
    await opened(conn);
    const rtts: number[] = [];
    for (let i = 0; i < PINGS; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        const off = conn.on('message', () => {
          off();
          resolve();
        });
        conn.send('data', new Uint8Array(16));
      });
      rtts.push((performance.now() - t0) * 1000);
    }
    rtts.sort((a, b) => a - b);
    received = 0;
    const chunk = new Uint8Array(64 << 10);
    const t0 = performance.now();
    for (let sent = 0; sent < RELAY_BYTES; sent += chunk.length) {
      conn.send('data', chunk);
      while (conn.stats.sendQueueBytes > 4 << 20) await new Promise((r) => setTimeout(r, 1));
    }
    while (received < RELAY_BYTES) await new Promise((r) => setTimeout(r, 1));
    const mbs = RELAY_BYTES / 1e6 / ((performance.now() - t0) / 1000);
    conn.close('done');
    return { rtt: rtts[rtts.length >> 1] as number, mbs };
  };
  const direct = await run(sink.url);
  const relayed = await run(relayUrl);
  reg.close();
  await sink.close('done');

  // UDP: a transport-udp echo listener, direct and through the relay's UDP room port.
  const udpEcho = await listenUdp({ channels, port: 0, host: '127.0.0.1', rateLimits: false });
  udpEcho.on('connection', (c) => c.on('message', ({ data }) => c.send('data', data)));
  const wsDummy = await listen({ channels, port: 0, host: '127.0.0.1' });
  const udpRoom = await (clients[0] as LobbyClient).create({ ...body(1), endpoints: [] });
  const udpReg = hostThroughRelay({
    relayUrl: (nodes[0] as Node).url.replace('http', 'ws'),
    room: udpRoom.room.id,
    token: udpRoom.token,
    target: wsDummy.url,
    udpTarget: { host: '127.0.0.1', port: udpEcho.port },
  });
  await udpReg.registered;
  let udpUrl: string | undefined;
  while (!udpUrl) udpUrl = (await (clients[clients.length - 1] as LobbyClient).join(udpRoom.room.id)).relay?.udp;
  const udpRtt = async (host: string, port: number) => {
    const conn = await connectUdp({ channels, host, port, rateLimits: false });
    const rtts: number[] = [];
    for (let i = 0; i < PINGS; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        const off = conn.on('message', () => {
          off();
          resolve();
        });
        conn.send('data', new Uint8Array(16));
      });
      rtts.push((performance.now() - t0) * 1000);
    }
    conn.close('done');
    rtts.sort((a, b) => a - b);
    return rtts[rtts.length >> 1] as number;
  };
  const udpDirectRttUs = await udpRtt('127.0.0.1', udpEcho.port);
  const u = new URL(udpUrl.replace(/^udp:/, 'http:'));
  const udpRelayRttUs = await udpRtt(u.hostname, Number(u.port));
  udpReg.close();
  await udpEcho.close('done');
  await wsDummy.close('done');
  return {
    announcesPerS,
    listsPerS,
    signalsPerS,
    heapPerRoom,
    relayMBs: relayed.mbs,
    directMBs: direct.mbs,
    relayRttUs: relayed.rtt,
    directRttUs: direct.rtt,
    udpRelayRttUs,
    udpDirectRttUs,
  };
}

const suite = new BenchSuite('lobby');
const rows = (label: string, f: Figures, base?: string) => {
  const b = (name: string) => (base ? { baseline: `${base}: ${name}` } : {});
  suite.record({ name: `${label}: rooms announced`, value: f.announcesPerS, unit: 'rooms/s', ...b('rooms announced') });
  suite.record({
    name: `${label}: filtered lists of ${ROOMS} rooms`,
    value: f.listsPerS,
    unit: 'lists/s',
    ...b(`filtered lists of ${ROOMS} rooms`),
  });
  suite.record({
    name: `${label}: signaling messages`,
    value: f.signalsPerS,
    unit: 'msg/s',
    ...b('signaling messages'),
  });
  suite.record({ name: `${label}: direct netplay-ws throughput`, value: f.directMBs, unit: 'MB/s' });
  suite.record({
    name: `${label}: relay throughput`,
    value: f.relayMBs,
    unit: 'MB/s',
    baseline: `${label}: direct netplay-ws throughput`,
  });
  suite.record({ name: `${label}: direct RTT 16 B`, value: f.directRttUs, unit: 'us' });
  suite.record({
    name: `${label}: relay RTT 16 B`,
    value: f.relayRttUs,
    unit: 'us',
    baseline: `${label}: direct RTT 16 B`,
    note: `adds ${(f.relayRttUs - f.directRttUs).toFixed(0)} us`,
  });
  suite.record({ name: `${label}: direct transport-udp RTT 16 B`, value: f.udpDirectRttUs, unit: 'us' });
  suite.record({
    name: `${label}: UDP relay RTT 16 B`,
    value: f.udpRelayRttUs,
    unit: 'us',
    baseline: `${label}: direct transport-udp RTT 16 B`,
    note: `adds ${(f.udpRelayRttUs - f.udpDirectRttUs).toFixed(0)} us`,
  });
  suite.record({ name: `${label}: node heap per room`, value: f.heapPerRoom, unit: 'bytes' });
};

const memoryNode = await startNode(undefined, '', 'mem');
rows('one node, in memory', await measure([memoryNode]));
await stopNode(memoryNode);

if (!findRedisServer()) {
  console.log('redis-server not found (Debian package redis-server): Redis rows skipped');
} else {
  const redis = await RedisProcess.start();
  try {
    const usedMemory = async () => {
      const c = createClient({ url: redis.url });
      await c.connect();
      const info = await c.info('memory');
      await c.close();
      return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    };
    const m0 = await usedMemory();
    const one = await startNode(redis.url, 'one:', 'A');
    const fOne = await measure([one]);
    const perRoom = ((await usedMemory()) - m0) / (ROOMS + 1);
    await stopNode(one);
    rows('one node + Redis', fOne, 'one node, in memory');
    suite.record({ name: 'Redis used_memory per room', value: perRoom, unit: 'bytes' });
    const a = await startNode(redis.url, 'two:', 'A');
    const b = await startNode(redis.url, 'two:', 'B');
    rows('two nodes + Redis', await measure([a, b]), 'one node + Redis');
    await stopNode(a);
    await stopNode(b);
  } finally {
    await redis.kill();
  }
}
suite.finish();
process.exit(0);
