/**
 * The sans-I/O UDP core without sockets: cost per 16-byte message sent, packed, sealed, parsed,
 * acknowledged and delivered between two peers on a virtual clock, next to the bare cost of
 * sealing and checking one datagram of the same size.
 */
import { BenchSuite } from '@netplay/bench-kit';
import { type ChannelSpec, ManualClock, Prng } from '@netplay/transport';
import { resolveConfig } from '../src/config.js';
import { newDropCounters } from '../src/counters.js';
import { UdpPeer } from '../src/peer.js';
import { UdpServerCore } from '../src/server.js';
import { crcOk, seal } from '../src/wire.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const clock = new ManualClock();
const prng = new Prng(1);
const config = resolveConfig();
const defer = (fn: () => void) => clock.setTimer(0, fn);
let client: UdpPeer | undefined;
const server = new UdpServerCore(
  {
    clock,
    defer,
    random: (n) => prng.fill(new Uint8Array(n)),
    output: (d) => clock.setTimer(0, () => client!.input(d)),
  },
  config,
  channels,
  'server',
);
client = UdpPeer.client(
  { clock, defer, drops: newDropCounters(), output: (d) => clock.setTimer(0, () => server.input(d, 'client')) },
  config,
  channels,
  'server',
);
clock.runUntil(() => client!.state === 'open', 1000);
const peer = server.session('client')!;
let delivered = 0;
peer.on('message', () => delivered++);

const suite = new BenchSuite('transport-udp/core');
const datagram = new Uint8Array(55);
suite.measure('seal + check one 55-byte datagram', () => {
  seal(datagram);
  if (!crcOk(datagram)) throw new Error('crc');
});
const msg = new Uint8Array(16);
suite.measure(
  'reliable 16 B message through the core',
  () => {
    client!.send('input', msg);
    clock.advance(0.1);
  },
  { baseline: 'seal + check one 55-byte datagram', note: 'one datagram per message, acks every 4' },
);
suite.measure(
  'unreliable 16 B message through the core',
  () => {
    client!.send('state', msg);
    clock.advance(0.1);
  },
  { baseline: 'seal + check one 55-byte datagram' },
);
suite.finish();
if (delivered === 0) throw new Error('nothing was delivered');
