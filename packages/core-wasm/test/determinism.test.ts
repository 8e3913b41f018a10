import { fc, test } from '@fast-check/vitest';
import { hash64 } from '@netplay/state';
import { describe, expect, it } from 'vitest';
import { Chip8Core } from '../src/index.js';
import { archiveRom, CHIP8_ARCHIVE_ROMS } from './fixtures.js';

const roms = new Map(CHIP8_ARCHIVE_ROMS.map((name) => [name, archiveRom(name)]));

/** One frame of input: a 16-bit mask for each of two ports. */
const frameInput = fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }));
/** Inputs held for a few frames each, as people press keys. */
const inputSequence = fc
  .array(fc.tuple(frameInput, fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 12 })
  .map((runs) => runs.flatMap(([input, n]) => Array.from({ length: n }, () => input)));

function fbHash(core: Chip8Core): bigint {
  return hash64(core.framebuffer().pixels);
}

/** Per frame: framebuffer hash, state checksum and audio hash. */
function play(core: Chip8Core, inputs: ReadonlyArray<readonly [number, number]>): Array<[bigint, bigint, bigint]> {
  const out: Array<[bigint, bigint, bigint]> = [];
  for (const [a, b] of inputs) {
    core.setInputValue(0, a);
    core.setInputValue(1, b);
    core.advance();
    const audio = core.audio();
    out.push([fbHash(core), core.checksum(), hash64(new Uint8Array(audio.buffer, audio.byteOffset, audio.byteLength))]);
  }
  return out;
}

describe('determinism over the chip8Archive ROMs', () => {
  test.prop([fc.constantFrom(...CHIP8_ARCHIVE_ROMS), inputSequence], { numRuns: 40 })(
    'two instances give identical framebuffer, state and audio hashes every frame',
    (name, inputs) => {
      const rom = roms.get(name)!;
      const a = Chip8Core.createSync(rom);
      const b = Chip8Core.createSync(rom);
      expect(play(a, inputs)).toEqual(play(b, inputs));
      expect(a.frame).toBe(inputs.length);
    },
  );

  test.prop([fc.constantFrom(...CHIP8_ARCHIVE_ROMS), inputSequence, fc.nat()], { numRuns: 40 })(
    'save at a random frame, run on, load, run again: the same hashes',
    (name, inputs, at) => {
      const core = Chip8Core.createSync(roms.get(name)!);
      const k = at % inputs.length;
      play(core, inputs.slice(0, k));
      const state = core.save();
      const first = play(core, inputs.slice(k));
      core.load(state);
      expect(core.frame).toBe(k);
      expect(play(core, inputs.slice(k))).toEqual(first);
    },
  );

  test.prop([fc.constantFrom(...CHIP8_ARCHIVE_ROMS), inputSequence, fc.nat()], { numRuns: 40 })(
    'a state saved in one instance loads into a fresh instance and continues identically',
    (name, inputs, at) => {
      const rom = roms.get(name)!;
      const a = Chip8Core.createSync(rom);
      const k = at % inputs.length;
      play(a, inputs.slice(0, k));
      const state = new Uint8Array(a.stateBytes);
      expect(a.saveInto(state)).toBe(a.stateBytes);
      const b = Chip8Core.createSync(rom);
      b.load(state);
      expect(b.frame).toBe(k);
      expect(b.checksum()).toBe(a.checksum());
      expect(play(b, inputs.slice(k))).toEqual(play(a, inputs.slice(k)));
    },
  );

  it('Chip8Core.create (asynchronous) runs like createSync', async () => {
    const rom = roms.get('tank')!;
    const frames = Array.from({ length: 30 }, (_, i) => [i & 0xff, 0] as const);
    const a = await Chip8Core.create(rom);
    expect(play(a, frames)).toEqual(play(Chip8Core.createSync(rom), frames));
  });

  test.prop([fc.constantFrom('tank', 'octojam1title', 'snek'), fc.integer({ min: 1, max: 0xffff_ffff })], {
    numRuns: 10,
  })('Cxnn comes from the seeded generator: the seed is part of the setup and the state', (name, seed) => {
    const rom = roms.get(name)!;
    const frames = Array.from({ length: 90 }, () => [0, 0] as const);
    const a = play(Chip8Core.createSync(rom, { seed }), frames);
    const b = play(Chip8Core.createSync(rom, { seed }), frames);
    expect(a).toEqual(b);
  });
});
