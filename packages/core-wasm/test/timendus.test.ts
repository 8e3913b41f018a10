import { describe, expect, it } from 'vitest';
import { Chip8Core, Chip8Platform } from '../src/index.js';
import { ascii, expected, expectedAscii, litPixels, packedSha256, timendus } from './fixtures.js';

const ALL_PLATFORMS = [
  Chip8Platform.Chip8,
  Chip8Platform.ModernChip8,
  Chip8Platform.SuperChipModern,
  Chip8Platform.SuperChipLegacy,
  Chip8Platform.XoChip,
] as const;

describe('Timendus 1-4: exact instruction counts', () => {
  const cases = [
    { rom: '1-chip8-logo', name: 'timendus-v4.2_1-chip8-logo', steps: 39 },
    { rom: '2-ibm-logo', name: 'timendus-v4.2_2-ibm-logo', steps: 20 },
    { rom: '3-corax+', name: 'timendus-v4.2_3-corax+', steps: 315 },
    { rom: '4-flags', name: 'timendus-v4.2_4-flags', steps: 960 },
  ];
  for (const c of cases) {
    for (const platform of ALL_PLATFORMS) {
      it(`${c.rom} after ${c.steps} instructions on platform ${platform}`, () => {
        const core = Chip8Core.createSync(timendus(c.rom), { platform });
        core.step(c.steps);
        const fb = core.framebuffer();
        const e = expected(c.name);
        expect([fb.width, fb.height]).toEqual([e.width, e.height]);
        expect(ascii(fb)).toBe(expectedAscii(e));
        expect(litPixels(fb)).toBe(e.lit_pixels);
        expect(packedSha256(fb)).toBe(e.packed_sha256);
      });
    }
  }

  it('3-corax+ and 4-flags end on a jump to self', () => {
    for (const [rom, steps] of [
      ['3-corax+', 315],
      ['4-flags', 960],
    ] as const) {
      const core = Chip8Core.createSync(timendus(rom));
      core.step(steps);
      const pc = core.pc;
      const op = (core.peek(pc) << 8) | core.peek(pc + 1);
      expect(op).toBe(0x1000 | pc);
    }
  });
});
