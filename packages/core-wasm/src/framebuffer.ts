/** A view of a core's framebuffer, as the ABI describes it. */
export interface Framebuffer {
  /** Width in pixels, as the core's `np_fb_width()` reported it this frame (CHIP-8: 64 or 128). */
  readonly width: number;
  /** Height in pixels, as the core's `np_fb_height()` reported it this frame (CHIP-8: 32 or 64). */
  readonly height: number;
  /** A {@link FramebufferFormat} value: 0 = one palette index per byte, 1 = RGBA8888. */
  readonly format: number;
  /**
   * The pixels: `width * height` bytes (format 0) or `width * height * 4` (format 1). A view into
   * the core's memory, valid until the core runs again; copy it to keep it.
   */
  readonly pixels: Uint8Array;
}

/**
 * Packs an index framebuffer into 1 bit per pixel: row-major, top row first, `width / 8` bytes per
 * row, most significant bit = leftmost pixel, 1 = any non-zero index. This is the packing
 * `expected-framebuffers/index.json` of the CHIP-8 fixtures hashes. Writes into `target` when it is
 * given (it must hold `width * height / 8` bytes) and returns the packed bytes.
 */
export function packFramebuffer(fb: Framebuffer, target?: Uint8Array): Uint8Array {
  const rowBytes = Math.ceil(fb.width / 8);
  const size = rowBytes * fb.height;
  const out = target ? target.subarray(0, size) : new Uint8Array(size);
  out.fill(0);
  const stride = fb.format === 1 ? 4 : 1;
  for (let y = 0; y < fb.height; y++) {
    for (let x = 0; x < fb.width; x++) {
      const p = (y * fb.width + x) * stride;
      const lit =
        stride === 1
          ? fb.pixels[p] !== 0
          : (fb.pixels[p] ?? 0) + (fb.pixels[p + 1] ?? 0) + (fb.pixels[p + 2] ?? 0) !== 0;
      if (lit) {
        const o = y * rowBytes + (x >> 3);
        out[o] = (out[o] ?? 0) | (0x80 >> (x & 7));
      }
    }
  }
  return out;
}
