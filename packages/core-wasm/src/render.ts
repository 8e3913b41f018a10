import { WasmCoreError } from './errors.js';
import type { Framebuffer } from './framebuffer.js';

/** An RGBA colour as 0xRRGGBBAA. */
export type Rgba = number;

/**
 * The default palette for index framebuffers: index 0 background, 1 plane 0, 2 plane 1, 3 both
 * (Octo's XO-CHIP colours).
 */
export const DEFAULT_PALETTE: readonly Rgba[] = [0x996600ff, 0xffcc00ff, 0xff6600ff, 0x662200ff];

/**
 * Writes the framebuffer as RGBA bytes (for `ImageData` / a canvas) into `target`, which must hold
 * `width * height * 4` bytes, and returns it. Index pixels go through `palette` (indexes beyond
 * it use its last colour); RGBA framebuffers are copied. Allocates nothing when `target` is given.
 */
export function framebufferToRgba(
  fb: Framebuffer,
  target: Uint8Array | Uint8ClampedArray = new Uint8ClampedArray(fb.width * fb.height * 4),
  palette: readonly Rgba[] = DEFAULT_PALETTE,
): Uint8Array | Uint8ClampedArray {
  const n = fb.width * fb.height;
  if (target.length < n * 4) throw new WasmCoreError('buffer-too-small', `RGBA target needs ${n * 4} bytes`);
  if (palette.length === 0) throw new WasmCoreError('bad-option', 'the palette is empty');
  if (fb.format === 1) {
    target.set(fb.pixels.subarray(0, n * 4));
    return target;
  }
  const last = palette.length - 1;
  for (let i = 0; i < n; i++) {
    const index = fb.pixels[i] ?? 0;
    const c = palette[Math.min(index, last)] ?? 0;
    const o = i * 4;
    target[o] = c >>> 24;
    target[o + 1] = (c >>> 16) & 0xff;
    target[o + 2] = (c >>> 8) & 0xff;
    target[o + 3] = c & 0xff;
  }
  return target;
}

function lit(fb: Framebuffer, x: number, y: number): boolean {
  if (x >= fb.width || y >= fb.height) return false;
  const i = y * fb.width + x;
  if (fb.format === 1) {
    const o = i * 4;
    return (fb.pixels[o] ?? 0) + (fb.pixels[o + 1] ?? 0) + (fb.pixels[o + 2] ?? 0) !== 0;
  }
  return (fb.pixels[i] ?? 0) !== 0;
}

/** Text rendering modes: two pixels per character cell vertically, or a 2x4 braille dot grid. */
export type TextMode = 'half-blocks' | 'braille';

const HALF = [' ', '\u2580', '\u2584', '\u2588']; // none, upper, lower, full

/**
 * Renders the framebuffer as text for a terminal, one string per line joined with `\n`:
 * `half-blocks` uses ▀ ▄ █ (one character per 1x2 pixels), `braille` uses U+2800..U+28FF (one
 * character per 2x4 pixels). Any non-zero pixel is lit.
 */
export function framebufferToText(fb: Framebuffer, mode: TextMode = 'half-blocks'): string {
  const lines: string[] = [];
  if (mode === 'half-blocks') {
    for (let y = 0; y < fb.height; y += 2) {
      let line = '';
      for (let x = 0; x < fb.width; x++) {
        line += HALF[(lit(fb, x, y) ? 1 : 0) | (lit(fb, x, y + 1) ? 2 : 0)];
      }
      lines.push(line);
    }
  } else if (mode === 'braille') {
    // Dot bits: (0,0)=0x01 (0,1)=0x02 (0,2)=0x04 (1,0)=0x08 (1,1)=0x10 (1,2)=0x20 (0,3)=0x40 (1,3)=0x80
    const bits = [
      [0x01, 0x08],
      [0x02, 0x10],
      [0x04, 0x20],
      [0x40, 0x80],
    ] as const;
    for (let y = 0; y < fb.height; y += 4) {
      let line = '';
      for (let x = 0; x < fb.width; x += 2) {
        let code = 0;
        for (let dy = 0; dy < 4; dy++) {
          const row = bits[dy]!;
          if (lit(fb, x, y + dy)) code |= row[0];
          if (lit(fb, x + 1, y + dy)) code |= row[1];
        }
        line += String.fromCharCode(0x2800 + code);
      }
      lines.push(line);
    }
  } else {
    throw new WasmCoreError('bad-option', `unknown text mode ${String(mode)}`);
  }
  return lines.join('\n');
}
