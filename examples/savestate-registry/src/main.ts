/**
 * The @netplay/state savestate registry on a toy machine: save a snapshot, run on, load it back
 * and replay to the same state (same checksum); describe a snapshot without the machine; keep the
 * NVRAM blob; a late-join page delta from power-on to now; and a corrupted snapshot refused with a
 * typed error, the machine untouched.
 */
import assert from 'node:assert/strict';
import { applyDelta, describeSnapshot, pageDelta, SnapshotError } from '@netplay/state';
import { ToyMachine } from './toy-machine.js';

const m = new ToyMachine();
const input = (f: number) => Uint8Array.of((f * 37) & 0xff);
const run = (machine: ToyMachine, from: number, to: number) => {
  for (let f = from; f < to; f++) {
    machine.setInput(0, input(f));
    machine.advance();
  }
};
const powerOn = new Uint8Array(m.stateBytes);
m.saveInto(powerOn);

run(m, 0, 120);
const snap = new Uint8Array(m.stateBytes);
m.saveInto(snap);
const at120 = m.checksum();
run(m, 120, 300);
const at300 = m.checksum();
console.log(`snapshot of ${snap.length} bytes at frame 120 (${describeSnapshot(snap).entries.length} entries)`);

// Load frame 120's snapshot and replay: the same inputs give the same state.
m.load(snap);
assert.equal(m.frame, 120);
assert.equal(m.checksum(), at120);
assert.equal(m.currentBank, 2, 'the accessor restored the bank latch');
run(m, 120, 300);
assert.equal(m.checksum(), at300, 'replay after load reaches the same state');
console.log(`load + replay 120 → 300: checksum ${at300.toString(16)} both times`);

// A second machine gets there from power-on through a late-join page delta.
const now = new Uint8Array(m.stateBytes);
m.saveInto(now);
const delta = pageDelta(powerOn, now, { layoutHash: m.registry.layoutHash });
const joiner = new ToyMachine();
joiner.load(applyDelta(powerOn, delta));
assert.equal(joiner.checksum(), at300);
console.log(`late join: page delta of ${delta.length} bytes for a ${now.length}-byte state`);

// NVRAM: only the high scores, loadable into a fresh machine.
const nvram = m.registry.saveNvram();
const next = new ToyMachine();
next.registry.loadNvram(nvram);
assert.deepEqual([...next.hiscores], [...m.hiscores]);
console.log(`NVRAM blob: ${nvram.length} bytes, high scores ${[...m.hiscores].join(', ')}`);

// A corrupted snapshot is refused with a typed error naming the problem; nothing changes.
const bad = snap.slice();
bad[0] = 0x58;
const before = m.checksum();
assert.throws(
  () => m.load(bad),
  (e: unknown) => e instanceof SnapshotError && e.code === 'bad-magic',
);
assert.equal(m.checksum(), before);
console.log('corrupted snapshot refused: SnapshotError bad-magic, state unchanged');
console.log('ok: save, load, replay, delta and NVRAM agree');
