/**
 * The sans-I/O UDP core without sockets: cost per 16-byte message sent, packed, sealed, parsed,
 * acknowledged and delivered between two peers on a virtual clock, next to the bare cost of
 * sealing and checking one datagram of the same size. The harness allocates nothing per message
 * (datagrams are copied into preallocated slots, the clock reuses its timer records), so the B/op
 * column is the core's. The kit's B/op undercounts when a collection runs during its loop, so the
 * heap per message is also recorded as counted through V8's GC profiler.
 */
import { BenchSuite } from '@netplay/bench-kit';
import type { ChannelSpec } from '@netplay/transport';
import { crcOk, seal } from '../src/wire.js';
import { openCoreRig } from '../test/core-rig.js';
import { allocatedBytes } from '../test/heap.js';

const channels: readonly ChannelSpec[] = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
];
const { server, step: stepOn } = openCoreRig(channels, 1);
const peer = server.session('client')!;
let delivered = 0;
peer.on('message', () => delivered++);

const suite = new BenchSuite('transport-udp/core');
const datagram = new Uint8Array(67);
suite.measure('seal + check one 67-byte datagram', () => {
  seal(datagram);
  if (!crcOk(datagram)) throw new Error('crc');
});
const msg = new Uint8Array(16);
const step = (channel: string) => (): void => stepOn(channel, msg, 0.25);
const reliable = step('input');
const unreliable = step('state');
// Warm up (the JIT needs tens of thousands of messages on a loaded machine).
for (let i = 0; i < 60_000; i++) {
  reliable();
  unreliable();
}
suite.measure('reliable 16 B message through the core', reliable, {
  baseline: 'seal + check one 67-byte datagram',
  note: 'one datagram per message, acks every 4',
});
suite.measure('unreliable 16 B message through the core', unreliable, {
  baseline: 'seal + check one 67-byte datagram',
});

const N = 20_000;
const perMessage = (fn: () => void): number => {
  for (let i = 0; i < 2000; i++) fn();
  return (
    allocatedBytes(() => {
      for (let i = 0; i < N; i++) fn();
    }) / N
  );
};
// What a receiver allocates by contract for each message: the bytes it owns and the event.
const events: Array<{ channel: string; data: Uint8Array }> = [];
let e = 0;
const inherent = perMessage(() => {
  events[e++ & 7] = { channel: 'input', data: datagram.slice(51, 67) };
});
suite.record({
  name: "heap: a receiver's own copy + event",
  value: inherent,
  unit: 'B/msg',
  note: 'allocated by contract (the receiver owns the bytes); GC-counted',
});
suite.record({
  name: 'heap: reliable message, both ends',
  value: perMessage(reliable),
  unit: 'B/msg',
  baseline: "heap: a receiver's own copy + event",
  note: 'GC-counted (V8 GC profiler)',
});
suite.record({
  name: 'heap: unreliable message, both ends',
  value: perMessage(unreliable),
  unit: 'B/msg',
  baseline: "heap: a receiver's own copy + event",
  note: 'GC-counted (V8 GC profiler)',
});
suite.finish();
if (delivered === 0) throw new Error('nothing was delivered');
