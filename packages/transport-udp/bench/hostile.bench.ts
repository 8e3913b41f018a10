/**
 * Hostile peers against one listener with default options, on loopback (issue 13); the hostile
 * peers run in child processes (bench/announcer.ts, bench/flooder.ts), so this process is the host:
 * - RSS of the listener's process while 64 hostile connections each announce maximal messages
 *   (first the case, the first fragment of 4 messages each; then as much of a maximal
 *   message as each can send without finishing it), as a ratio to the same process with the 64
 *   connections idle, next to the reassembly bytes the listener reports holding;
 * - CPU of the host process while one peer (a child process) floods 32-byte messages packed in
 *   full datagrams at its maximum rate, without a rate limit (`rateLimits: false`: every message
 *   is decoded and delivered) and with the default one (closed with `flood`, then its datagrams
 *   are dropped), as ratios to the idle host measured in the same run.
 * Benchmarks may read wall time; the library does not.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BenchSuite } from '@netplay/bench-kit';
import type { ChannelSpec, CloseEvent } from '@netplay/transport';
import { listenUdp, type UdpListener } from '../src/socket.js';
import { packed } from './raw-peer.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const suite = new BenchSuite('transport-udp/hostile');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MiB = 1 << 20;

// ------------------------------------------------------------------ memory

/** Runs the announcer child against `port`; `step(name)` resolves when it printed `name`. */
function announcer(port: number): { step: (name: string) => Promise<void>; end: () => void } {
  const child = spawn(
    process.execPath,
    ['--conditions=@netplay/source', '--import', 'tsx', 'bench/announcer.ts', String(port)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map<string, () => void>();
  lines.on('line', (l) => waiting.get(l.trim())?.());
  return {
    step: (name) =>
      new Promise<void>((resolve) => {
        waiting.set(name, resolve);
        child.stdin.write(`${name}\n`);
      }),
    end: () => child.stdin.end(),
  };
}

/** RSS and live array-buffer bytes of this process after collecting garbage. */
async function memory(): Promise<{ rss: number; buffers: number }> {
  for (let i = 0; i < 3; i++) {
    await sleep(50);
    globalThis.gc?.();
  }
  const m = process.memoryUsage();
  return { rss: m.rss, buffers: m.arrayBuffers };
}

{
  const listener = await listenUdp({ channels });
  const child = announcer(listener.port);
  const base = await memory();
  await child.step('idle');
  const idle = await memory();
  suite.record({
    name: 'RSS: listener + 64 idle connections',
    value: idle.rss / MiB,
    unit: 'MiB',
    note: `${listener.connections.length} connections; ${((idle.rss - base.rss) / MiB).toFixed(1)} MiB above the bare listener`,
  });
  await child.step('announce');
  const announced = await memory();
  suite.record({
    name: 'RSS: 64 connections announcing 4 × 4 MiB each',
    value: announced.rss / MiB,
    unit: 'MiB',
    baseline: 'RSS: listener + 64 idle connections',
    note: `reassembly held ${(listener.core.reassembly.held / 1024).toFixed(0)} KiB, array buffers +${((announced.buffers - idle.buffers) / 1024).toFixed(0)} KiB (1 GiB reserved before)`,
  });
  let peak = 0;
  let peakRss = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, listener.core.reassembly.held);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 5);
  const t0 = performance.now();
  await child.step('fill');
  clearInterval(sampler);
  const filled = await memory();
  suite.record({
    name: 'RSS: 64 connections sending 4 MiB they never finish',
    value: filled.rss / MiB,
    unit: 'MiB',
    baseline: 'RSS: listener + 64 idle connections',
    note: `live array buffers +${((filled.buffers - idle.buffers) / MiB).toFixed(1)} MiB, peak RSS ${(peakRss / MiB).toFixed(0)} MiB; reassembly peak ${(peak / MiB).toFixed(1)} MiB (cap 32), ${listener.core.reassembly.evictions} evicted, ${listener.connections.length} left, ${((performance.now() - t0) / 1000).toFixed(1)} s; 256 MiB announced`,
  });
  suite.record({
    name: 'peak reassembly held by the listener',
    value: peak / MiB,
    unit: 'MiB',
    note: 'listener-wide cap 32 MiB by default',
  });
  child.end();
  listener.close();
  await listener.closed;
}

// ------------------------------------------------------------------ CPU under a flood

function cpuWhile(run: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  return run().then(() => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / (performance.now() - t0);
  });
}

function flood(port: number, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@netplay/source', '--import', 'tsx', 'bench/flooder.ts', String(port), String(ms)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (b) => {
      out += String(b);
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out).sent as number) : reject(new Error(`flooder exited ${code}`)),
    );
  });
}

async function host(limited: boolean): Promise<{
  listener: UdpListener;
  delivered: () => number;
  closed: () => CloseEvent | undefined;
  closedAt: () => number;
}> {
  const listener = await listenUdp({ channels, ...(limited ? {} : { rateLimits: false as const }) });
  let delivered = 0;
  let closed: CloseEvent | undefined;
  let closedAt = -1;
  let openedAt = -1;
  listener.on('connection', (c) => {
    openedAt = performance.now();
    c.on('message', () => delivered++);
    c.on('close', (e) => {
      closed = e;
      closedAt = performance.now() - openedAt;
    });
  });
  return { listener, delivered: () => delivered, closed: () => closed, closedAt: () => closedAt };
}

const FLOOD_MS = 2000;
const per = packed(32);
const ROUNDS = 2;
const cpu = { idle: [] as number[], unlimited: [] as number[], limited: [] as number[] };
const notes = { unlimited: '', limited: '' };
for (let r = 0; r < ROUNDS; r++) {
  const a = await host(false);
  const b = await host(true);
  cpu.idle.push(await cpuWhile(() => sleep(FLOOD_MS)));
  let sent = 0;
  cpu.unlimited.push(
    await cpuWhile(async () => {
      sent = await flood(a.listener.port, FLOOD_MS);
    }),
  );
  notes.unlimited = `${((cpu.unlimited.at(-1)! * FLOOD_MS * 1000) / (sent / per)).toFixed(1)} µs CPU per datagram sent; ${(sent / 1e6).toFixed(2)} M messages sent, ${(a.delivered() / 1e6).toFixed(2)} M delivered, ${a.closed() ? 'closed' : 'never closed'}`;
  cpu.limited.push(
    await cpuWhile(async () => {
      sent = await flood(b.listener.port, FLOOD_MS);
    }),
  );
  notes.limited = `${((cpu.limited.at(-1)! * FLOOD_MS * 1000) / (sent / per)).toFixed(1)} µs CPU per datagram sent; ${(sent / 1e6).toFixed(2)} M messages sent, ${b.delivered()} delivered, closed with ${b.closed()?.error?.code} ${b.closedAt().toFixed(0)} ms after it connected`;
  for (const h of [a, b]) {
    h.listener.close();
    await h.listener.closed;
  }
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
suite.record({
  name: 'host CPU, idle',
  value: median(cpu.idle) * 100,
  unit: '% of a core',
  note: `${FLOOD_MS} ms windows, ${ROUNDS} rounds`,
});
suite.record({
  name: 'host CPU, one peer flooding, no rate limit',
  value: median(cpu.unlimited) * 100,
  unit: '% of a core',
  baseline: 'host CPU, idle',
  note: notes.unlimited,
});
suite.record({
  name: 'host CPU, one peer flooding, default rate limit',
  value: median(cpu.limited) * 100,
  unit: '% of a core',
  baseline: 'host CPU, idle',
  note: notes.limited,
});
suite.finish();
