import { fc, test } from '@fast-check/vitest';
import type { Core } from '@netplay/state';
import { StateError } from '@netplay/state';
import { ExampleGame, TestCore } from '@netplay/state/testing';
import { describe, expect, it } from 'vitest';

type Factory = () => Core;

const factories: [string, Factory][] = [
  ['ExampleGame', () => new ExampleGame()],
  ['TestCore (2 players, 2 bytes)', () => new TestCore()],
  ['TestCore (4 players, 5 bytes, seed 9)', () => new TestCore({ players: 4, inputBytes: 5, seed: 9, ramBytes: 97 })],
];

/** Inputs for `frames` frames: one byte string per port per frame. */
function inputsArb(core: Core, maxFrames: number): fc.Arbitrary<Uint8Array[][]> {
  return fc.array(
    fc.array(fc.uint8Array({ minLength: core.inputBytes, maxLength: core.inputBytes }), {
      minLength: core.ports,
      maxLength: core.ports,
    }),
    { minLength: 1, maxLength: maxFrames },
  );
}

function run(core: Core, frames: readonly Uint8Array[][]): void {
  for (const inputs of frames) {
    inputs.forEach((input, port) => {
      core.setInput(port, input);
    });
    core.advance();
  }
}

describe.each(factories)('%s implements Core', (_name, make) => {
  const probe = make();

  test.prop([inputsArb(probe, 30), inputsArb(probe, 30)], { numRuns: 60 })(
    'save, run on, load, replay: same frame and checksum (SyncTest)',
    (before, after) => {
      const core = make();
      run(core, before);
      const state = new Uint8Array(core.stateBytes);
      expect(core.saveInto(state)).toBe(core.stateBytes);
      const frame = core.frame;
      run(core, after);
      const sum = core.checksum();
      const end = core.frame;
      core.load(state);
      expect(core.frame).toBe(frame);
      run(core, after);
      expect(core.frame).toBe(end);
      expect(core.checksum()).toBe(sum);
    },
  );

  test.prop([inputsArb(probe, 20)], { numRuns: 40 })(
    'two cores fed the same inputs agree; reset returns to power-on',
    (frames) => {
      const a = make();
      const b = make();
      const powerOn = a.checksum();
      run(a, frames);
      run(b, frames);
      expect(a.frame).toBe(frames.length);
      expect(a.checksum()).toBe(b.checksum());
      a.reset();
      expect(a.frame).toBe(0);
      expect(a.checksum()).toBe(powerOn);
    },
  );

  it('a changed input changes the state', () => {
    const a = make();
    const b = make();
    const zero = new Uint8Array(a.inputBytes);
    const one = new Uint8Array(a.inputBytes);
    one[0] = 1;
    a.setInput(a.ports - 1, zero);
    b.setInput(b.ports - 1, one);
    a.advance();
    b.advance();
    expect(a.checksum()).not.toBe(b.checksum());
  });

  it('load rejects a bad state and changes nothing', () => {
    const core = make();
    const input = new Uint8Array(core.inputBytes).fill(5);
    core.setInput(0, input);
    core.advance();
    const sum = core.checksum();
    const state = new Uint8Array(core.stateBytes);
    core.saveInto(state);
    state[0]! ^= 1;
    core.advance();
    const after = core.checksum();
    expect(() => core.load(state)).toThrow();
    expect(core.checksum()).toBe(after);
    expect(after).not.toBe(sum);
  });
});

describe('TestCore', () => {
  it('every input bit of every port matters', () => {
    const ref = new TestCore({ players: 3, inputBytes: 4 });
    for (let p = 0; p < 3; p++) ref.setInput(p, new Uint8Array(4));
    ref.advance();
    const base = ref.checksum();
    const seen = new Set<bigint>([base]);
    for (let p = 0; p < 3; p++) {
      for (let k = 0; k < 4; k++) {
        for (let bit = 0; bit < 8; bit++) {
          const c = new TestCore({ players: 3, inputBytes: 4 });
          const input = new Uint8Array(4);
          input[k] = 1 << bit;
          c.setInput(p, input);
          c.advance();
          seen.add(c.checksum());
        }
      }
    }
    // 96 single-bit inputs and the all-zero input: 97 different states.
    expect(seen.size).toBe(97);
  });

  it('steers with bits 0..3 and scores every byte', () => {
    const c = new TestCore({ players: 2, inputBytes: 2 });
    c.setInput(0, Uint8Array.of(0b0101, 3));
    c.setInput(1, Uint8Array.of(0b1010, 0));
    c.advance();
    expect(c.position(0)).toEqual([1, 1]);
    expect(c.position(1)).toEqual([-1, -1]);
    expect(c.score(0)).toBe(0b0101 + 3 * 2);
    expect(c.score(1)).toBe(0b1010);
  });

  it('different seeds diverge', () => {
    const a = new TestCore({ seed: 1 });
    const b = new TestCore({ seed: 2 });
    a.advance();
    b.advance();
    expect(a.checksum()).not.toBe(b.checksum());
  });

  it('the nondeterministic variant fails SyncTest, reproducibly', () => {
    const results: bigint[][] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const core = new TestCore({ nondeterministic: true });
      const state = new Uint8Array(core.stateBytes);
      core.saveInto(state);
      core.advance();
      const first = core.checksum();
      core.load(state);
      core.advance();
      const second = core.checksum();
      expect(second).not.toBe(first);
      results.push([first, second]);
    }
    expect(results[0]).toEqual(results[1]);
  });

  it('validates its options and inputs', () => {
    expect(() => new TestCore({ players: 0 })).toThrow(StateError);
    expect(() => new TestCore({ inputBytes: 0 })).toThrow(StateError);
    expect(() => new TestCore({ ramBytes: 0 })).toThrow(StateError);
    const c = new TestCore();
    expect(() => c.setInput(2, new Uint8Array(2))).toThrow(StateError);
    expect(() => c.setInput(0, new Uint8Array(3))).toThrow(StateError);
  });
});

describe('ExampleGame', () => {
  it('moves the dots', () => {
    const g = new ExampleGame();
    g.setInput(0, Uint8Array.of(1));
    g.setInput(1, Uint8Array.of(2));
    g.advance();
    g.advance();
    expect(g.positions).toEqual([2, -2]);
    expect(g.frame).toBe(2);
  });
});
