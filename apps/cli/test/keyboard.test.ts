import { fc, test } from '@fast-check/vitest';
import { PadButton } from '@netplay/core-wasm';
import { describe, expect, it } from 'vitest';
import { KEY_BINDINGS, KeyState, splitKeys } from '../src/keyboard.js';

describe('keyboard', () => {
  it('splits raw input into keys, keeping arrow sequences whole', () => {
    expect(splitKeys('w\x1b[Aq')).toEqual(['w', '\x1b[A', 'q']);
    expect(splitKeys('\x1b')).toEqual(['\x1b']);
  });

  it('maps W/S and the arrows to the pad buttons up and down', () => {
    const k = new KeyState(120, 550);
    k.feed('w', 0);
    expect(k.pad(10)).toBe(1 << PadButton.Up);
    k.feed('\x1b[B', 20);
    expect(k.pad(30)).toBe((1 << PadButton.Up) | (1 << PadButton.Down));
  });

  test.prop([fc.constantFrom(...Object.keys(KEY_BINDINGS)), fc.integer({ min: 0, max: 1e6 })])(
    'a single press holds its button for the first-hold time, then releases',
    (key, t) => {
      const k = new KeyState(120, 550);
      k.feed(key, t);
      const bit = 1 << KEY_BINDINGS[key]!;
      expect(k.pad(t + 549)).toBe(bit);
      expect(k.pad(t + 550)).toBe(0);
    },
  );

  test.prop([fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 30 })])(
    'auto-repeats keep the button held; it releases the hold time after the last repeat',
    (gaps) => {
      const k = new KeyState(120, 550);
      let t = 0;
      k.feed('s', t);
      for (const g of gaps) {
        t += g;
        expect(k.pad(t)).toBe(1 << PadButton.Down);
        k.feed('s', t);
      }
      expect(k.pad(t + 119)).toBe(1 << PadButton.Down);
      expect(k.pad(t + 120)).toBe(0);
    },
  );

  it('q, Esc and Ctrl-C ask to quit; other keys are ignored', () => {
    for (const key of ['q', 'Q', '\x1b', '\x03']) {
      const k = new KeyState();
      k.feed(key, 0);
      expect(k.quit).toBe(true);
    }
    const k = new KeyState();
    k.feed('xyz', 0);
    expect(k.quit).toBe(false);
    expect(k.pad(1)).toBe(0);
  });
});
