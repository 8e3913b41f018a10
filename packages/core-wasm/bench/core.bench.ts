// CHIP-8 core throughput, savestate cost and the rollback budget, each next to a baseline measured
// in the same run (a wasm call that does nothing, a plain JS loop, a TypedArray copy).
import { readFileSync } from 'node:fs';
import { BenchSuite } from '@netplay/bench-kit';
import { Chip8Core, Chip8Platform } from '../src/index.js';

const suite = new BenchSuite('core-wasm/chip8');
const spaceRacer = new Uint8Array(
  readFileSync(new URL('../../../../shared/fixtures/chip8/chip8archive/roms/spaceracer.ch8', import.meta.url)),
);

// A busy XO-CHIP program: arithmetic, memory, a skip, a sprite draw and a jump, never waiting.
// loop: v0 += 1; v1 += v0; i := 0x300; v2 := v2 + 3; if v2 == 7 then v3 := 1; draw 8x1 at (v0, v1); jump loop
const loop = [0x7001, 0x8104, 0xa300, 0x7203, 0x3207, 0x6301, 0xd011, 0x1200];
const busy = new Uint8Array(0x110);
loop.forEach((w, i) => {
  busy[i * 2] = w >> 8;
  busy[i * 2 + 1] = w & 0xff;
});
busy[0x100] = 0x81;

// Baselines.
const noop = Chip8Core.createSync(busy, { platform: Chip8Platform.XoChip, database: null });
suite.measure('wasm call (no-op export)', () => noop.v(0), { batch: 1 });
let acc = 0;
suite.measure(
  'JS loop, 1000 adds',
  () => {
    for (let i = 0; i < 1000; i++) acc = (acc + i) & 0xff;
  },
  { batch: 1000, note: 'plain JS loop iteration' },
);

for (const tickrate of [1000, 10_000]) {
  const core = Chip8Core.createSync(busy, { platform: Chip8Platform.XoChip, tickrate, database: null });
  suite.measure(`XO-CHIP instructions/s at tickrate ${tickrate}`, () => core.advance(), {
    batch: tickrate,
    baseline: 'JS loop, 1000 adds',
    note: 'one advance() = tickrate instructions',
  });
}

// Space Racer: a full race frame, then save and load of its state. The title screens wait on Fx0A
// (a frame there stops early), so the bench plays through them, saves the start of the race, and
// measures 60-frame stretches of racing (both players holding up) from that state.
const race = Chip8Core.createSync(spaceRacer);
const hold = (frames: number, p1: number, p2: number) => {
  race.setInputValue(0, p1);
  race.setInputValue(1, p2);
  for (let i = 0; i < frames; i++) race.advance();
};
hold(400, 0, 0);
for (const pause of [60, 100, 30]) {
  hold(5, 1, 0);
  hold(5, 0, 0);
  hold(pause, 0, 0);
}
const raceStart = race.save();
race.setInputValue(0, 1);
race.setInputValue(1, 1);
const frame = suite.measure(
  'Space Racer frame (advance)',
  () => {
    race.load(raceStart);
    for (let i = 0; i < 60; i++) race.advance();
  },
  {
    batch: 60,
    baseline: 'wasm call (no-op export)',
    note: 'racing, tickrate 20, timers, audio; 1 load per 60 frames included',
  },
);
const state = new Uint8Array(race.stateBytes);
const copySrc = new Uint8Array(race.stateBytes);
const copyDst = new Uint8Array(race.stateBytes);
suite.measure(`TypedArray copy of ${race.stateBytes} B`, () => copyDst.set(copySrc));
const save = suite.measure('Space Racer saveInto (regions)', () => race.saveInto(state), {
  baseline: `TypedArray copy of ${race.stateBytes} B`,
});
const load = suite.measure('Space Racer load (regions)', () => race.load(state), {
  baseline: `TypedArray copy of ${race.stateBytes} B`,
});
suite.measure('Space Racer checksum', () => race.checksum(), {
  baseline: `TypedArray copy of ${race.stateBytes} B`,
});
const whole = Chip8Core.createSync(spaceRacer, { state: 'memory' });
const wholeState = new Uint8Array(whole.stateBytes);
suite.measure(`saveInto, whole memory (${whole.stateBytes} B)`, () => whole.saveInto(wholeState), {
  baseline: `TypedArray copy of ${race.stateBytes} B`,
});

// Rollback budget: one load, then per re-simulated frame an advance and a save.
const budgetMs = 1000 / 60;
const perFrameMs = 1000 / frame.value + 1000 / save.value;
const fit = Math.floor((budgetMs - 1000 / load.value) / perFrameMs);
suite.record({
  name: 'rollback frames in 16.7 ms (Space Racer)',
  value: fit,
  unit: 'frames',
  note: `load + n x (advance + saveInto): ${(1000 / load.value).toFixed(4)} ms + n x ${perFrameMs.toFixed(4)} ms`,
});
const xo = Chip8Core.createSync(busy, { platform: Chip8Platform.XoChip, tickrate: 1000, database: null });
const xoFrame = suite.measure('XO-CHIP frame at tickrate 1000', () => xo.advance());
const xoState = new Uint8Array(xo.stateBytes);
const xoSave = suite.measure(`XO-CHIP saveInto (${xo.stateBytes} B)`, () => xo.saveInto(xoState));
const xoLoad = suite.measure('XO-CHIP load', () => xo.load(xoState));
suite.record({
  name: 'rollback frames in 16.7 ms (XO-CHIP, tickrate 1000)',
  value: Math.floor((budgetMs - 1000 / xoLoad.value) / (1000 / xoFrame.value + 1000 / xoSave.value)),
  unit: 'frames',
});
if (acc < 0) console.log(acc);
suite.finish();
