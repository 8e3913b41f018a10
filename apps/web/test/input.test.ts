import { fc, test } from '@fast-check/vitest';
import { PadButton } from '@netplay/core-wasm';
import { describe, expect, it } from 'vitest';
import { BotInput, KeyboardInput } from '../src/input.js';

function run(seed: number, frames: number): number[] {
  const bot = new BotInput(seed);
  const out: number[] = [];
  for (let i = 0; i < frames; i++) {
    const input = bot.next();
    out.push(input[0]! | (input[1]! << 8));
  }
  return out;
}

describe('BotInput', () => {
  test.prop([fc.integer({ min: 0, max: 2 ** 32 - 1 })], { numRuns: 50 })(
    'the same seed gives the same inputs, and only Up, Down or nothing',
    (seed) => {
      const a = run(seed, 300);
      expect(run(seed, 300)).toEqual(a);
      for (const pad of a) expect([0, 1 << PadButton.Up, 1 << PadButton.Down]).toContain(pad);
    },
  );

  it('holds each choice for at least 4 frames', () => {
    const pads = run(12345, 2000);
    let runLength = 1;
    const lengths: number[] = [];
    for (let i = 1; i < pads.length; i++) {
      if (pads[i] === pads[i - 1]) runLength++;
      else {
        lengths.push(runLength);
        runLength = 1;
      }
    }
    expect(lengths.length).toBeGreaterThan(10);
    for (const l of lengths) expect(l).toBeGreaterThanOrEqual(4);
  });
});

describe('KeyboardInput', () => {
  function key(type: string, code: string): Event {
    return Object.assign(new Event(type, { cancelable: true }), { code });
  }

  it('maps W/S and the arrows to Up/Down while held, and releases on blur', () => {
    const target = new EventTarget();
    const kb = new KeyboardInput(target as unknown as Window);
    const pad = (): number => {
      const i = kb.next();
      return i[0]! | (i[1]! << 8);
    };
    expect(pad()).toBe(0);
    target.dispatchEvent(key('keydown', 'KeyW'));
    expect(pad()).toBe(1 << PadButton.Up);
    target.dispatchEvent(key('keydown', 'ArrowDown'));
    expect(pad()).toBe((1 << PadButton.Up) | (1 << PadButton.Down));
    target.dispatchEvent(key('keyup', 'KeyW'));
    expect(pad()).toBe(1 << PadButton.Down);
    target.dispatchEvent(key('keydown', 'KeyQ'));
    expect(pad()).toBe(1 << PadButton.Down);
    target.dispatchEvent(new Event('blur'));
    expect(pad()).toBe(0);
    kb.close();
    target.dispatchEvent(key('keydown', 'KeyW'));
    expect(pad()).toBe(0);
  });
});
