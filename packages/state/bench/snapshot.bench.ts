// Save and load of registered state next to a plain TypedArray.set copy of the same bytes.
import { allocationPerCall, BenchSuite } from '@netplay/bench-kit';
import { SnapshotRing, StateRegistry } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';
import { fillPseudoRandom, opsPerSecond } from './timing.js';

const suite = new BenchSuite('state/snapshot');
const MiB = 1 << 20;

function machine(totalBytes: number, small: number) {
  const r = new StateRegistry();
  const kinds = [Uint8Array, Uint16Array, Uint32Array, Float64Array] as const;
  let smallBytes = 0;
  for (let i = 0; i < small; i++) {
    const K = kinds[i % kinds.length]!;
    const a = new K(4);
    fillPseudoRandom(new Uint8Array(a.buffer), i + 7);
    smallBytes += a.byteLength;
    r.register(`dev${i % 50}`, i, 'regs', a);
  }
  // A few large arrays for the rest: RAM, VRAM, a 32-bit table, a 16-bit sample buffer.
  const rest = totalBytes - smallBytes;
  const parts = [rest / 2, rest / 4, rest / 8, rest / 8].map((n) => Math.floor(n / 8) * 8);
  parts[0]! += rest - parts.reduce((a, b) => a + b, 0);
  const large = [
    new Uint8Array(parts[0]!),
    new Uint8Array(parts[1]!),
    new Uint32Array(parts[2]! / 4),
    new Int16Array(parts[3]! / 2),
  ];
  // Real bytes everywhere: untouched zero pages would make every copy look faster than memory is.
  large.forEach((a, i) => {
    fillPseudoRandom(new Uint8Array(a.buffer), i + 1);
  });
  r.register('main', 0, 'ram', large[0]!);
  r.register('video', 0, 'vram', large[1]!);
  r.register('video', 0, 'table', large[2]!);
  r.register('sound', 0, 'samples', large[3]!);
  r.freeze();
  return r;
}

for (const size of [1, 16, 64]) {
  for (const small of [0, 1000]) {
    const r = machine(size * MiB, small);
    const snap = new Uint8Array(r.snapshotBytes);
    r.saveInto(snap);
    const src = new Uint8Array(size * MiB);
    const dst = new Uint8Array(size * MiB);
    fillPseudoRandom(src, 99);
    fillPseudoRandom(dst, 98);
    const label = `${size} MiB${small ? ' (4 large + 1000 small entries)' : ' (4 large arrays)'}`;
    const copyName = `TypedArray.set copy ${label}`;
    const copy = () => dst.set(src);
    suite.record({
      name: copyName,
      value: opsPerSecond(copy),
      unit: 'ops/s',
      bytesPerOp: allocationPerCall(copy, size === 1 ? 2000 : 20),
    });
    const save = () => r.saveInto(snap);
    const load = () => r.load(snap);
    suite.record({
      name: `saveInto ${label}`,
      value: opsPerSecond(save),
      unit: 'ops/s',
      baseline: copyName,
      bytesPerOp: allocationPerCall(save, size === 1 ? 2000 : 20),
      note: small ? '' : 'goal ≥ 0.8',
    });
    suite.record({
      name: `load ${label}`,
      value: opsPerSecond(load),
      unit: 'ops/s',
      baseline: copyName,
      bytesPerOp: allocationPerCall(load, size === 1 ? 2000 : 20),
      note: small ? '' : 'goal ≥ 0.8',
    });
  }
}

// The rollback loop: save a small core's state into a ring every frame, load one back.
const core = new TestCore({ players: 4, inputBytes: 2, ramBytes: 8192 });
const ring = new SnapshotRing(8, core.stateBytes);
const saver = (t: Uint8Array) => core.saveInto(t);
const loader = (s: Uint8Array) => core.load(s);
let f = 0;
const copySrc = new Uint8Array(core.stateBytes);
const copyDst = new Uint8Array(core.stateBytes);
fillPseudoRandom(copySrc, 5);
suite.measure(`TypedArray.set copy ${core.stateBytes} B`, () => copyDst.set(copySrc));
suite.measure(
  `SnapshotRing save TestCore (${core.stateBytes} B)`,
  () => {
    ring.save(f++, saver);
  },
  { baseline: `TypedArray.set copy ${core.stateBytes} B`, note: 'B/op should be 0' },
);
suite.measure(
  `SnapshotRing load TestCore (${core.stateBytes} B)`,
  () => {
    ring.load(f - 1, loader);
  },
  { baseline: `TypedArray.set copy ${core.stateBytes} B`, note: 'B/op should be 0' },
);
suite.finish();
