import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  Chip8Core,
  DEFAULT_PALETTE,
  type Framebuffer,
  framebufferToRgba,
  framebufferToText,
  packFramebuffer,
  WasmCoreError,
} from '../src/index.js';
import { ascii, expected, expectedAscii, timendus } from './fixtures.js';

/** Random index framebuffers with even sizes. */
const framebuffers = fc
  .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 10 }))
  .chain(([w, h]) =>
    fc
      .uint8Array({ minLength: w * 2 * h * 4, maxLength: w * 2 * h * 4, max: 3 })
      .map((pixels): Framebuffer => ({ width: w * 2, height: h * 4, format: 0, pixels })),
  );

/** Decodes a half-block rendering back into lit pixels. */
function fromHalfBlocks(text: string, width: number, height: number): boolean[] {
  const out = new Array<boolean>(width * height).fill(false);
  text.split('\n').forEach((line, row) => {
    [...line].forEach((ch, x) => {
      const top = ch === '\u2580' || ch === '\u2588';
      const bottom = ch === '\u2584' || ch === '\u2588';
      out[row * 2 * width + x] = top;
      if (row * 2 + 1 < height) out[(row * 2 + 1) * width + x] = bottom;
    });
  });
  return out;
}

function fromBraille(text: string, width: number, height: number): boolean[] {
  const out = new Array<boolean>(width * height).fill(false);
  const dots = [
    [0, 0, 0x01],
    [0, 1, 0x02],
    [0, 2, 0x04],
    [1, 0, 0x08],
    [1, 1, 0x10],
    [1, 2, 0x20],
    [0, 3, 0x40],
    [1, 3, 0x80],
  ] as const;
  text.split('\n').forEach((line, row) => {
    [...line].forEach((ch, col) => {
      const code = (ch.codePointAt(0) ?? 0x2800) - 0x2800;
      for (const [dx, dy, bit] of dots) if (code & bit) out[(row * 4 + dy) * width + col * 2 + dx] = true;
    });
  });
  return out;
}

describe('renderers', () => {
  test.prop([framebuffers])('half-blocks and braille are lossless for the lit/dark image', (fb) => {
    const lit = [...fb.pixels].map((p) => p !== 0);
    const half = framebufferToText(fb, 'half-blocks');
    expect(half.split('\n')).toHaveLength(fb.height / 2);
    expect(fromHalfBlocks(half, fb.width, fb.height)).toEqual(lit);
    const braille = framebufferToText(fb, 'braille');
    expect(braille.split('\n')).toHaveLength(fb.height / 4);
    expect(fromBraille(braille, fb.width, fb.height)).toEqual(lit);
  });

  test.prop([framebuffers])('RGBA maps each index through the palette', (fb) => {
    const rgba = framebufferToRgba(fb);
    for (let i = 0; i < fb.pixels.length; i++) {
      const c = DEFAULT_PALETTE[fb.pixels[i] ?? 0] ?? 0;
      expect([rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2], rgba[i * 4 + 3]]).toEqual([
        c >>> 24,
        (c >>> 16) & 0xff,
        (c >>> 8) & 0xff,
        c & 0xff,
      ]);
    }
  });

  test.prop([framebuffers])('packing sets one bit per lit pixel, MSB first', (fb) => {
    const packed = packFramebuffer(fb);
    const rowBytes = Math.ceil(fb.width / 8);
    expect(packed.length).toBe(rowBytes * fb.height);
    for (let y = 0; y < fb.height; y++) {
      for (let x = 0; x < fb.width; x++) {
        const bit = ((packed[y * rowBytes + (x >> 3)] ?? 0) >> (7 - (x & 7))) & 1;
        expect(bit).toBe(fb.pixels[y * fb.width + x] !== 0 ? 1 : 0);
      }
    }
  });

  it('renders the IBM logo: 32 rows of half blocks, the same picture as the fixture', () => {
    const core = Chip8Core.createSync(timendus('2-ibm-logo'));
    core.step(20);
    const fb = core.framebuffer();
    const text = framebufferToText(fb);
    expect(text.split('\n')).toHaveLength(16);
    expect(ascii(fb)).toBe(expectedAscii(expected('timendus-v4.2_2-ibm-logo')));
    const decoded = fromHalfBlocks(text, 64, 32)
      .map((b) => (b ? '#' : '.'))
      .join('');
    expect(decoded).toBe(expectedAscii(expected('timendus-v4.2_2-ibm-logo')).replaceAll('\n', ''));
  });

  it('rejects small targets, empty palettes and unknown modes', () => {
    const fb: Framebuffer = { width: 2, height: 2, format: 0, pixels: new Uint8Array(4) };
    expect(() => framebufferToRgba(fb, new Uint8Array(15))).toThrow(WasmCoreError);
    expect(() => framebufferToRgba(fb, undefined, [])).toThrow(WasmCoreError);
    expect(() => framebufferToText(fb, 'sixel' as 'braille')).toThrow(WasmCoreError);
  });
});
