/**
 * The browser side of the Chromium↔Chromium benchmark (bundled by chromium-pair.ts with Vite): the
 * package's browser entry on Chromium's own `RTCPeerConnection` and `WebSocket`, driven through
 * `window.rtcBench`. Runs only in a page.
 */
import type { ChannelSpec, Connection } from '@netplay/transport';
import { connectWebRtc, listenWebRtc } from '../src/index.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];

/** A macrotask turn without setTimeout's 4 ms clamp. */
const channel = new MessageChannel();
const waiting: (() => void)[] = [];
// (typed through a cast: this package type-checks against Node's lib, not the DOM's)
(channel.port1 as unknown as { onmessage: (() => void) | null }).onmessage = () => waiting.shift()?.();
const turn = () =>
  new Promise<void>((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? Number.NaN;

let conn: Connection | undefined;
let received = 0;
let echo = false;

function attach(c: Connection): void {
  conn = c;
  c.on('message', (m) => {
    received++;
    if (echo) c.send(m.channel, m.data);
  });
}

const api = {
  /** Listens in `room` as peer "host"; the first connection becomes this page's. */
  async listen(url: string, room: string): Promise<void> {
    const listener = await listenWebRtc({ signaling: { url, room, peer: 'host' }, channels, rateLimits: false });
    listener.on('connection', attach);
  },
  /** Connects to "host" in `room`; resolves with the time to open in ms. */
  connect(url: string, room: string): Promise<number> {
    const t0 = performance.now();
    const c = connectWebRtc({ signaling: { url, room, peer: 'guest' }, to: 'host', channels, rateLimits: false });
    attach(c);
    return new Promise((resolve, reject) => {
      c.on('open', () => resolve(performance.now() - t0));
      c.on('close', (e) => reject(new Error(`closed before open: ${e.code} ${e.reason}`)));
    });
  },
  isOpen: () => conn?.state === 'open',
  setEcho(on: boolean): void {
    echo = on;
  },
  received: () => received,
  /** Median round trip in µs of one 16-byte unreliable message echoed by the other page. */
  async pingPong(count: number): Promise<number> {
    const c = conn!;
    const msg = new Uint8Array(16);
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const before = received;
      const t0 = performance.now();
      c.send('state', msg);
      while (received === before && performance.now() - t0 < 100) await turn();
      if (received > before) samples.push((performance.now() - t0) * 1000);
    }
    return median(samples);
  },
  /** Sends 16-byte unreliable messages, `perTurn` per macrotask, for `ms`: { sent, elapsedMs }. */
  async flood(ms: number, perTurn: number): Promise<{ sent: number; elapsedMs: number }> {
    const c = conn!;
    const msg = new Uint8Array(16);
    let sent = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      for (let i = 0; i < perTurn; i++) c.send('state', msg);
      sent += perTurn;
      await turn();
    }
    return { sent, elapsedMs: performance.now() - t0 };
  },
  close(): void {
    conn?.close('bench over');
  },
};

(globalThis as unknown as { rtcBench: typeof api }).rtcBench = api;
export type RtcBenchApi = typeof api;
