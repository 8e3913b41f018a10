import type { VideoFrame } from '@netplay/core-libretro';

/**
 * The last video frame of a libretro core, kept as a luminance threshold map and drawn as braille
 * text: one character per 4×8 pixels (every other pixel sampled), so a 256×240 NES picture is
 * 64 columns × 30 rows. The sink copies nothing per pixel: it keeps the raw frame bytes in a
 * reused buffer and converts only when the terminal asks (every other display frame).
 */
export class LibretroScreen {
  private raw = new Uint8Array(0);
  private width = 0;
  private height = 0;
  private pitch = 0;
  private format: VideoFrame['format'] = 'rgb565';
  private seen = false;

  /** The core's video sink: keeps a copy of the frame (the core's memory is valid only during the call). */
  readonly sink = (f: VideoFrame): void => {
    const n = f.pitch * f.height;
    if (this.raw.length < n) this.raw = new Uint8Array(n);
    this.raw.set(f.data.subarray(0, n));
    this.width = f.width;
    this.height = f.height;
    this.pitch = f.pitch;
    this.format = f.format;
    this.seen = true;
  };

  /** Luminance 0..255 of pixel (x, y), 0 outside the frame. */
  luma(x: number, y: number): number {
    if (x >= this.width || y >= this.height) return 0;
    const raw = this.raw;
    let r: number;
    let g: number;
    let b: number;
    if (this.format === 'xrgb8888') {
      const o = y * this.pitch + x * 4;
      b = raw[o]!;
      g = raw[o + 1]!;
      r = raw[o + 2]!;
    } else {
      const o = y * this.pitch + x * 2;
      const v = raw[o]! | (raw[o + 1]! << 8);
      if (this.format === 'rgb565') {
        r = ((v >> 11) & 31) << 3;
        g = ((v >> 5) & 63) << 2;
        b = (v & 31) << 3;
      } else {
        r = ((v >> 10) & 31) << 3;
        g = ((v >> 5) & 31) << 3;
        b = (v & 31) << 3;
      }
    }
    return (r * 77 + g * 150 + b * 29) >> 8;
  }

  /** The picture as braille text (lit where luminance > `threshold`), or undefined before the first frame. */
  text(threshold = 64): string | undefined {
    if (!this.seen) return undefined;
    const bits = [
      [0x01, 0x08],
      [0x02, 0x10],
      [0x04, 0x20],
      [0x40, 0x80],
    ] as const;
    const lines: string[] = [];
    for (let y = 0; y < this.height; y += 8) {
      let line = '';
      for (let x = 0; x < this.width; x += 4) {
        let code = 0;
        for (let dy = 0; dy < 4; dy++) {
          const row = bits[dy]!;
          if (this.luma(x, y + 2 * dy) > threshold) code |= row[0];
          if (this.luma(x + 2, y + 2 * dy) > threshold) code |= row[1];
        }
        line += String.fromCharCode(0x2800 + code);
      }
      lines.push(line);
    }
    return lines.join('\n');
  }
}
