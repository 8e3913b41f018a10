/**
 * The PRNG against Math.random, and how fast the simulator moves messages (wall-clock cost of
 * virtual traffic), against a direct emitter dispatch measured in the same run.
 */
import { BenchSuite } from '@netplay/bench-kit';
import { Emitter } from '../src/emitter.js';
import { Prng } from '../src/prng.js';
import { SimulatedNetwork } from '../src/simulated-network.js';

const suite = new BenchSuite('transport/sim');

let sink = 0;
suite.measure(
  'Math.random',
  () => {
    // A local sum, stored once: a double stored to a module variable on every call is boxed.
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += Math.random();
    sink += sum > 0 ? 1 : 0;
  },
  { batch: 1000 },
);
const prng = new Prng(1);
suite.measure(
  'Prng.nextFloat',
  () => {
    // A local sum, stored once: a double stored to a module variable on every call is boxed.
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += prng.nextFloat();
    sink += sum > 0 ? 1 : 0;
  },
  { batch: 1000, baseline: 'Math.random' },
);
suite.measure(
  'Prng.int(0, 6)',
  () => {
    // A local sum, stored once: a double stored to a module variable on every call is boxed.
    let sum = 0;
    for (let i = 0; i < 1000; i++) sum += prng.int(0, 6);
    sink += sum > 0 ? 1 : 0;
  },
  { batch: 1000, baseline: 'Math.random' },
);

const emitter = new Emitter<{ message: { channel: string; data: Uint8Array } }>();
emitter.on('message', (m) => {
  sink += m.data.length;
});
const payload = new Uint8Array(16);
suite.measure(
  'direct emitter dispatch',
  () => {
    for (let i = 0; i < 100; i++) emitter.emit('message', { channel: 'input', data: payload.slice() });
  },
  { batch: 100 },
);

const net = new SimulatedNetwork({ seed: 1, link: { latencyMs: 10, jitterMs: 2 } });
const channels = [
  { name: 'input', kind: 'reliable' },
  { name: 'state', kind: 'unreliable' },
] as const;
const { client, server } = net.pair('a', 'b', { channels });
server.on('message', (m) => {
  sink += m.data.length;
});
suite.measure(
  'sim reliable 16 B msg (send, ack, deliver)',
  () => {
    for (let i = 0; i < 100; i++) client.send('input', payload);
    net.advance(30);
  },
  { batch: 100, baseline: 'direct emitter dispatch', note: 'wall cost of simulated traffic' },
);
suite.measure(
  'sim unreliable 16 B msg',
  () => {
    for (let i = 0; i < 100; i++) client.send('state', payload);
    net.advance(30);
  },
  { batch: 100, baseline: 'direct emitter dispatch' },
);

suite.finish();
if (sink === 42) console.log('');
