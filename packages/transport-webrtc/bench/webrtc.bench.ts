/**
 * WebRTC data channels (node-datachannel) Node↔Node on loopback, next to transport-udp on loopback
 * in the same run: connect time (WebRTC includes joining the signaling room, the offer/answer and
 * ICE/DTLS/SCTP), ping-pong RTT on the unreliable channel (one 16-byte message in flight), and
 * 16-byte unreliable messages delivered per second. Runs are interleaved; medians of 5 reported.
 * Then the same three figures Chromium↔Chromium (two pages of Debian's chromium on the package's
 * browser entry, chromium-pair.ts), compared with the same UDP medians; skipped with a printed
 * reason when Chromium is not installed.
 * Benchmarks may read wall time; the library does not.
 */
import { BenchSuite } from '@netplay/bench-kit';
import type { ChannelSpec, Connection } from '@netplay/transport';
import { pollUntil } from '@netplay/transport/conformance';
import { connectUdp, listenUdp } from '@netplay/transport-udp';
import {
  connectWebRtcNode,
  LOOPBACK_RTC,
  listenSignaling,
  listenWebRtcNode,
  NodeRTCPeerConnection,
  type RtcDataChannelLike,
} from '../src/server.js';
import { call, openChromium } from './chromium-pair.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const ROUNDS = 5;
const PINGS = 500;
const THROUGHPUT_MS = 1000;
const PER_TURN = 64;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

interface Pair {
  readonly connectMs: number;
  readonly client: Connection;
  readonly server: Connection;
  close(): Promise<void>;
}

async function udpPair(): Promise<Pair> {
  const listener = await listenUdp({ channels, rateLimits: false });
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server = c;
  });
  const t0 = performance.now();
  const client = await connectUdp({ channels, host: '127.0.0.1', port: listener.port, rateLimits: false });
  await pollUntil(() => client.state === 'open' && server !== undefined, 5000, 0);
  const connectMs = performance.now() - t0;
  return {
    connectMs,
    client,
    server: server!,
    async close() {
      client.close();
      listener.close();
    },
  };
}

async function webrtcPair(round: number): Promise<Pair> {
  const signaling = await listenSignaling();
  const room = `bench-${round}`;
  const listener = await listenWebRtcNode({
    signaling: { url: signaling.url, room, peer: 'host' },
    channels,
    rtc: LOOPBACK_RTC,
    rateLimits: false,
  });
  let server: Connection | undefined;
  listener.on('connection', (c) => {
    server = c;
  });
  const t0 = performance.now();
  const client = connectWebRtcNode({
    signaling: { url: signaling.url, room, peer: 'guest' },
    to: 'host',
    channels,
    rtc: LOOPBACK_RTC,
    rateLimits: false,
  });
  await pollUntil(() => client.state === 'open' && server !== undefined, 10_000, 0);
  const connectMs = performance.now() - t0;
  if (client.state !== 'open' || !server) throw new Error('webrtc pair did not open');
  return {
    connectMs,
    client,
    server,
    async close() {
      client.close();
      listener.close();
      await signaling.close();
    },
  };
}

/**
 * Raw node-datachannel: two polyfill peer connections wired directly (no signaling server, no
 * netplay framing), one unordered `maxRetransmits: 0` data channel; 16-byte messages delivered per
 * second with the same sending pattern. The floor our transport's per-message work sits on.
 */
async function rawDataChannelRate(): Promise<number> {
  const config = { iceServers: [], bindAddress: '127.0.0.1' };
  const a = new NodeRTCPeerConnection(config);
  const b = new NodeRTCPeerConnection(config);
  a.onicecandidate = (e) => {
    if (e.candidate?.candidate) void b.addIceCandidate(e.candidate);
  };
  b.onicecandidate = (e) => {
    if (e.candidate?.candidate) void a.addIceCandidate(e.candidate);
  };
  const init = { negotiated: true, id: 0, ordered: false, maxRetransmits: 0 };
  const tx: RtcDataChannelLike = a.createDataChannel('raw', init);
  const offer = await a.createOffer();
  await a.setLocalDescription(offer);
  await b.setRemoteDescription({ type: 'offer', sdp: a.localDescription?.sdp ?? offer.sdp ?? '' });
  const rx: RtcDataChannelLike = b.createDataChannel('raw', init);
  const answer = await b.createAnswer();
  await b.setLocalDescription(answer);
  await a.setRemoteDescription({ type: 'answer', sdp: b.localDescription?.sdp ?? answer.sdp ?? '' });
  await pollUntil(() => tx.readyState === 'open' && rx.readyState === 'open', 5000, 1);
  let received = 0;
  rx.onmessage = () => {
    received++;
  };
  const msg = new Uint8Array(16);
  const t0 = performance.now();
  while (performance.now() - t0 < THROUGHPUT_MS) {
    for (let i = 0; i < PER_TURN; i++) tx.send(msg);
    await turn();
  }
  await pollUntil(() => false, 100);
  const rate = received / ((performance.now() - t0) / 1000);
  a.close();
  b.close();
  return rate;
}

/** Median round trip of one 16-byte message on the unreliable channel, echoed by the server, in µs. */
async function pingPong(pair: Pair): Promise<number> {
  pair.server.on('message', (m) => pair.server.send(m.channel, m.data));
  const msg = new Uint8Array(16);
  const samples: number[] = [];
  let wake: (() => void) | undefined;
  pair.client.on('message', () => wake?.());
  for (let i = 0; i < PINGS; i++) {
    const t0 = performance.now();
    const back = new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
      // A lost message (rare on loopback) is given up after 100 ms.
      setTimeout(() => resolve(false), 100);
    });
    pair.client.send('state', msg);
    if (await back) samples.push((performance.now() - t0) * 1000);
    wake = undefined;
  }
  return median(samples);
}

/** 16-byte unreliable messages delivered per second, `PER_TURN` sent per event-loop turn. */
async function throughput(pair: Pair): Promise<{ perSecond: number; delivered: number }> {
  let received = 0;
  pair.server.on('message', () => {
    received++;
  });
  const msg = new Uint8Array(16);
  let sent = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < THROUGHPUT_MS) {
    for (let i = 0; i < PER_TURN; i++) pair.client.send('state', msg);
    sent += PER_TURN;
    await turn();
  }
  await pollUntil(() => false, 100);
  const elapsed = (performance.now() - t0) / 1000;
  return { perSecond: received / elapsed, delivered: received / sent };
}

const suite = new BenchSuite('transport-webrtc/loopback');
const results = {
  udpConnect: [] as number[],
  rtcConnect: [] as number[],
  udpRtt: [] as number[],
  rtcRtt: [] as number[],
  udpRate: [] as number[],
  rtcRate: [] as number[],
  udpDelivered: [] as number[],
  rtcDelivered: [] as number[],
  rawRate: [] as number[],
};
for (let round = 0; round < ROUNDS; round++) {
  const udp = await udpPair();
  results.udpConnect.push(udp.connectMs);
  results.udpRtt.push(await pingPong(udp));
  await udp.close();
  const rtc = await webrtcPair(round);
  results.rtcConnect.push(rtc.connectMs);
  results.rtcRtt.push(await pingPong(rtc));
  await rtc.close();
  const udp2 = await udpPair();
  const u = await throughput(udp2);
  results.udpRate.push(u.perSecond);
  results.udpDelivered.push(u.delivered);
  await udp2.close();
  const rtc2 = await webrtcPair(100 + round);
  const r = await throughput(rtc2);
  results.rtcRate.push(r.perSecond);
  results.rtcDelivered.push(r.delivered);
  await rtc2.close();
  results.rawRate.push(await rawDataChannelRate());
}
// Connect time and RTT: lower is better, so the ratio row is UDP / WebRTC (speed relative to UDP).
suite.record({ name: 'UDP connect', value: median(results.udpConnect), unit: 'ms' });
suite.record({
  name: 'WebRTC connect (signaling + ICE + DTLS + SCTP + HELLO)',
  value: median(results.rtcConnect),
  unit: 'ms',
  baseline: 'UDP connect',
  ratio: median(results.udpConnect) / median(results.rtcConnect),
  note: 'ratio = UDP time / WebRTC time (1 = as fast)',
});
suite.record({ name: 'UDP ping-pong RTT, unreliable 16 B', value: median(results.udpRtt), unit: 'us' });
suite.record({
  name: 'WebRTC ping-pong RTT, unreliable 16 B',
  value: median(results.rtcRtt),
  unit: 'us',
  baseline: 'UDP ping-pong RTT, unreliable 16 B',
  ratio: median(results.udpRtt) / median(results.rtcRtt),
  note: 'ratio = UDP RTT / WebRTC RTT',
});
suite.record({
  name: 'UDP unreliable 16 B delivered',
  value: median(results.udpRate),
  unit: 'msg/s',
  note: `${(median(results.udpDelivered) * 100).toFixed(1)} % of sent delivered; ${PER_TURN} per turn`,
});
suite.record({
  name: 'WebRTC unreliable 16 B delivered',
  value: median(results.rtcRate),
  unit: 'msg/s',
  baseline: 'UDP unreliable 16 B delivered',
  note: `${(median(results.rtcDelivered) * 100).toFixed(1)} % of sent delivered; ${PER_TURN} per turn`,
});
suite.record({
  name: 'raw node-datachannel unreliable 16 B delivered',
  value: median(results.rawRate),
  unit: 'msg/s',
  note: 'no signaling, no netplay framing: the floor under WebRTC',
});
suite.record({
  name: 'WebRTC unreliable 16 B delivered vs raw data channel',
  value: median(results.rtcRate),
  unit: 'msg/s',
  baseline: 'raw node-datachannel unreliable 16 B delivered',
  note: 'cost of the sequence header, stats, budget and events per message',
});

// Chromium↔Chromium: two pages (two browser contexts), the browser entry on Chromium's own
// RTCPeerConnection, a real signaling server in this process.
const chromium = await openChromium();
if (typeof chromium === 'string') {
  console.log(`Chromium↔Chromium rows skipped: ${chromium}`);
} else {
  const browserResults = {
    connect: [] as number[],
    rtt: [] as number[],
    rate: [] as number[],
    delivered: [] as number[],
  };
  const signaling = await listenSignaling({ rateLimits: false });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const { a, b, close } = await chromium.pair();
      const room = `chromium-${round}`;
      await call(a, 'listen', signaling.url, room);
      browserResults.connect.push(await call(b, 'connect', signaling.url, room));
      await pollUntil(() => false, 50);
      await call(a, 'setEcho', true);
      browserResults.rtt.push(await call(b, 'pingPong', PINGS));
      await call(a, 'setEcho', false);
      const before = await call(a, 'received');
      const { sent, elapsedMs } = await call(b, 'flood', THROUGHPUT_MS, PER_TURN);
      await pollUntil(() => false, 100);
      const got = (await call(a, 'received')) - before;
      browserResults.rate.push(got / (elapsedMs / 1000));
      browserResults.delivered.push(got / sent);
      await call(b, 'close');
      await close();
    }
  } finally {
    await chromium.close();
    await signaling.close();
  }
  suite.record({
    name: 'Chromium↔Chromium WebRTC connect (signaling + ICE + DTLS + SCTP + HELLO)',
    value: median(browserResults.connect),
    unit: 'ms',
    baseline: 'UDP connect',
    ratio: median(results.udpConnect) / median(browserResults.connect),
    note: 'ratio = UDP time / WebRTC time; two pages of one Chromium',
  });
  suite.record({
    name: 'Chromium↔Chromium WebRTC ping-pong RTT, unreliable 16 B',
    value: median(browserResults.rtt),
    unit: 'us',
    baseline: 'UDP ping-pong RTT, unreliable 16 B',
    ratio: median(results.udpRtt) / median(browserResults.rtt),
    note: 'ratio = UDP RTT / WebRTC RTT (UDP: Node↔Node)',
  });
  suite.record({
    name: 'Chromium↔Chromium WebRTC unreliable 16 B delivered',
    value: median(browserResults.rate),
    unit: 'msg/s',
    baseline: 'UDP unreliable 16 B delivered',
    note: `${(median(browserResults.delivered) * 100).toFixed(1)} % of sent delivered; ${PER_TURN} per macrotask`,
  });
}
suite.finish();
process.exit(0);
