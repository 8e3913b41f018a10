import { describe, expect, it } from 'vitest';
import { Chip8Core, Chip8Platform, type Framebuffer } from '../src/index.js';
import { ascii, expected, expectedAscii, packedSha256, runFrames, timendus } from './fixtures.js';

/** Runs a Timendus ROM with the 0x1FF selector, at 1000 instructions per frame. */
function runTimendus(rom: string, platform: Chip8Platform, selector: number, frames: number): Chip8Core {
  const core = Chip8Core.createSync(timendus(rom), { platform, tickrate: 1000, layout: 'keypad' });
  core.poke(0x1ff, selector);
  runFrames(core, frames);
  return core;
}

// ---------------------------------------------------------------------------------------------
// 5-quirks
// ---------------------------------------------------------------------------------------------

/** The CHIP-8 expectation picture: the reference for glyphs (labels, ON/OFF, checkmark). */
const chip8Picture = expectedAscii(expected('timendus-v4.2_5-quirks_chip8')).split('\n');

/** A glyph of the 5-quirks screen: `w` columns, 4 rows, at (x, y) of a 64x32 ASCII picture. */
function glyph(rows: readonly string[], x: number, y: number, w = 3): string {
  return rows
    .slice(y, y + 4)
    .map((r) => r.slice(x, x + w))
    .join('/');
}

// Letters taken from the labels of the CHIP-8 picture (row tops 1, 6, 11, 16, 21, 26; 4 px per letter).
const LETTER = {
  O: glyph(chip8Picture, 42, 1), // "ON" of vF reset
  N: glyph(chip8Picture, 46, 1),
  F: glyph(chip8Picture, 46, 21), // "OFF" of Shifting
  E: glyph(chip8Picture, 5, 6), // mEmory
  R: glyph(chip8Picture, 17, 6), // memoRy
  L: glyph(chip8Picture, 5, 16), // cLipping
  S: glyph(chip8Picture, 1, 21), // Shifting
  H: glyph(chip8Picture, 5, 21), // sHifting
  T: glyph(chip8Picture, 17, 21), // shifTing
};
const CHECKMARK = glyph(chip8Picture, 57, 1, 6);

/** What QUIRKS.md §2 says each platform must show, per row (vF reset, Memory, Disp.wait, Clipping, Shifting, Jumping). */
const EXPECTED_WORDS: Record<string, { selector: number; platform: Chip8Platform; words: string[] }> = {
  'SUPER-CHIP modern': {
    selector: 2,
    platform: Chip8Platform.SuperChipModern,
    words: ['OFF', 'OFF', 'NONE', 'BOTH', 'ON', 'ON'],
  },
  'SUPER-CHIP legacy': {
    selector: 4,
    platform: Chip8Platform.SuperChipLegacy,
    words: ['OFF', 'OFF', 'LRES', 'BOTH', 'ON', 'ON'],
  },
  'XO-CHIP': { selector: 3, platform: Chip8Platform.XoChip, words: ['OFF', 'ON', 'NONE', 'NONE', 'OFF', 'OFF'] },
};

function wordAt(rows: readonly string[], y: number, letters: number): string[] {
  return Array.from({ length: letters }, (_, i) => glyph(rows, 42 + 4 * i, y));
}

describe('Timendus 5-quirks', () => {
  it('CHIP-8 (0x1FF = 1): the packed framebuffer hash of the VIP expectation', () => {
    const core = runTimendus('5-quirks', Chip8Platform.Chip8, 1, 400);
    const fb = core.framebuffer();
    expect(ascii(fb)).toBe(chip8Picture.join('\n'));
    expect(packedSha256(fb)).toBe(expected('timendus-v4.2_5-quirks_chip8').packed_sha256);
  });

  for (const [label, c] of Object.entries(EXPECTED_WORDS)) {
    it(`${label} (0x1FF = ${c.selector}): every quirk cell shows the expected value and a checkmark`, () => {
      const core = runTimendus('5-quirks', c.platform, c.selector, 400);
      const fb = core.framebuffer();
      expect([fb.width, fb.height]).toEqual([64, 32]);
      const rows = ascii(fb).split('\n');
      c.words.forEach((word, row) => {
        const y = 1 + 5 * row;
        // The checkmark (a cross would differ) in the result column.
        expect(glyph(rows, 57, y, 6), `row ${row} check`).toBe(CHECKMARK);
        // The value: letters we have reference glyphs for are compared; 'B' has none on the CHIP-8 screen.
        const shown = wordAt(rows, y, word.length);
        [...word].forEach((letter, i) => {
          const ref = LETTER[letter as keyof typeof LETTER] as string | undefined;
          if (ref !== undefined) expect(shown[i], `row ${row} letter ${i} of ${word}`).toBe(ref);
          else expect(shown[i]).toMatch(/#/);
        });
        // Nothing after the word in the value column.
        const after = glyph(rows, 42 + 4 * word.length, y, 57 - 42 - 4 * word.length);
        expect(after.replace(/[./]/g, '')).toBe('');
      });
    });
  }

  it('a platform with the wrong quirks shows crosses (the check really tests something)', () => {
    const core = runTimendus('5-quirks', Chip8Platform.ModernChip8, 1, 400);
    const rows = ascii(core.framebuffer()).split('\n');
    expect(glyph(rows, 57, 1, 6)).not.toBe(CHECKMARK); // vF reset is off on modern CHIP-8
  });
});

// ---------------------------------------------------------------------------------------------
// 6-keypad
// ---------------------------------------------------------------------------------------------

describe('Timendus 6-keypad', () => {
  // Keys 1 and 6 are held by two different players: the machine keypad is the OR of all ports.
  for (const [selector, name] of [
    [1, 'timendus-v4.2_6-keypad_down-1-6'],
    [2, 'timendus-v4.2_6-keypad_up-1-6'],
  ] as const) {
    it(`test ${selector} with keys 1 (port 0) and 6 (port 1) held`, () => {
      const core = Chip8Core.createSync(timendus('6-keypad'), { platform: Chip8Platform.Chip8, tickrate: 1000 });
      core.poke(0x1ff, selector);
      core.setInput(0, new Uint8Array([1 << 1, 0]));
      core.setInput(1, new Uint8Array([1 << 6, 0]));
      runFrames(core, 120);
      expect(packedSha256(core.framebuffer())).toBe(expected(name).packed_sha256);
    });
  }

  it('test 3 (Fx0A): press for 30 frames, release: "all good"', () => {
    const core = Chip8Core.createSync(timendus('6-keypad'), {
      platform: Chip8Platform.Chip8,
      tickrate: 1000,
      layout: 'keypad',
    });
    core.poke(0x1ff, 3);
    runFrames(core, 60);
    const waiting = core.pc;
    core.setInputValue(2, 1 << 5);
    runFrames(core, 30);
    // Still halted on Fx0A while the key is held.
    expect(core.pc).toBe(waiting);
    expect(core.peek(waiting) & 0xf0).toBe(0xf0);
    expect(core.peek(waiting + 1)).toBe(0x0a);
    core.setInputValue(2, 0);
    runFrames(core, 60);
    expect(packedSha256(core.framebuffer())).toBe(expected('timendus-v4.2_6-keypad_getkey-ok').packed_sha256);
  });
});

// ---------------------------------------------------------------------------------------------
// 8-scrolling
// ---------------------------------------------------------------------------------------------

function litSet(fb: Framebuffer, dx = 0, dy = 0): Set<string> {
  const s = new Set<string>();
  for (let y = 0; y < fb.height; y++) {
    for (let x = 0; x < fb.width; x++) if (fb.pixels[y * fb.width + x] !== 0) s.add(`${x - dx},${y - dy}`);
  }
  return s;
}

function asciiDiff(actual: string, wanted: string): string[] {
  const a = actual.split('\n');
  const b = wanted.split('\n');
  const out: string[] = [];
  a.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) if (row[x] !== b[y]?.[x]) out.push(`${x},${y}`);
  });
  return out;
}

describe('Timendus 8-scrolling', () => {
  // The reference pictures (SUPER-CHIP layout) differ from what the v4.2 ROM draws in exactly two
  // pixels: where the top box's sides meet the bottom boxes' top edge. The ROM's loop at 0x47C
  // (`if v6 != 26`) stops the sides one row above that edge, so a correct interpreter lights these
  // two pixels; the pictures (from an earlier revision) show them dark.
  it('mode 1, SUPER-CHIP lores modern: the lores picture (but for the two pixels explained above)', () => {
    const fb = runTimendus('8-scrolling', Chip8Platform.SuperChipModern, 1, 120).framebuffer();
    const e = expected('timendus-v4.2_8-scrolling_lores-pass');
    expect([fb.width, fb.height]).toEqual([e.width, e.height]);
    expect(asciiDiff(ascii(fb), expectedAscii(e))).toEqual(['26,15', '37,15']);
  });

  it('mode 3, SUPER-CHIP hires: the hires picture (but for the same two pixels)', () => {
    const fb = runTimendus('8-scrolling', Chip8Platform.SuperChipModern, 3, 120).framebuffer();
    const e = expected('timendus-v4.2_8-scrolling_hires-pass');
    expect([fb.width, fb.height]).toEqual([e.width, e.height]);
    expect(asciiDiff(ascii(fb), expectedAscii(e))).toEqual(['58,32', '69,32']);
  });

  it('mode 2, SUPER-CHIP lores legacy: half-pixel scrolls (twice as many) land where mode 1 lands', () => {
    const legacy = runTimendus('8-scrolling', Chip8Platform.SuperChipLegacy, 2, 120).framebuffer();
    const modern = runTimendus('8-scrolling', Chip8Platform.SuperChipModern, 1, 120).framebuffer();
    expect(ascii(legacy)).toBe(ascii(modern));
    // Without half-pixel scrolling the legacy path overshoots.
    const wrong = runTimendus('8-scrolling', Chip8Platform.SuperChipModern, 2, 120).framebuffer();
    expect(ascii(wrong)).not.toBe(ascii(modern));
  });

  it('modes 4 and 5, XO-CHIP lores and hires: every arrow stays inside the frame; both draw the same picture', () => {
    const lores = runTimendus('8-scrolling', Chip8Platform.XoChip, 4, 120).framebuffer();
    const hires = runTimendus('8-scrolling', Chip8Platform.XoChip, 5, 120).framebuffer();
    expect([lores.width, hires.width]).toEqual([64, 128]);
    const lit = litSet(lores);
    // The XO-CHIP frame: lines x = 20, 31, 42 and y = 4, 15, 26; arrows are drawn outside it and scrolled in.
    for (const p of lit) {
      const [x, y] = p.split(',').map(Number) as [number, number];
      expect(x >= 20 && x <= 42 && y >= 4 && y <= 26, `pixel ${p} outside the frame`).toBe(true);
    }
    // Four 8x8 arrows of 46..56 lit pixels each plus the frame: far more than the frame alone.
    expect(lit.size).toBeGreaterThan(200);
    // The hires test draws the same picture 32 px right and 17 px down.
    expect([...litSet(hires, 32, 17)].sort()).toEqual([...lit].sort());
  });
});
