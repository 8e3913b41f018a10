/**
 * A zlib stream (RFC 1950) holding `data` in stored (uncompressed) deflate blocks: what a
 * LOAD_SAVESTATE carries when both ends advertised zlib, without a compressor. Costs 5 bytes per
 * 65,535 plus 6.
 */
export function zlibStored(data: Uint8Array): Uint8Array {
  const blocks = Math.max(1, Math.ceil(data.length / 65_535));
  const out = new Uint8Array(2 + data.length + 5 * blocks + 4);
  out[0] = 0x78; // deflate, 32 KiB window
  out[1] = 0x01; // no preset dictionary, fastest; (0x78 << 8 | 0x01) % 31 === 0
  let o = 2;
  for (let b = 0; b < blocks; b++) {
    const start = b * 65_535;
    const n = Math.min(65_535, data.length - start);
    out[o++] = b === blocks - 1 ? 1 : 0; // BFINAL, BTYPE = 00 (stored)
    out[o++] = n & 0xff;
    out[o++] = n >>> 8;
    out[o++] = ~n & 0xff;
    out[o++] = (~n >>> 8) & 0xff;
    out.set(data.subarray(start, start + n), o);
    o += n;
  }
  let a = 1;
  let s = 0;
  for (let i = 0; i < data.length; i++) {
    a = (a + data[i]!) % 65_521;
    s = (s + a) % 65_521;
  }
  const adler = ((s << 16) | a) >>> 0;
  out[o++] = adler >>> 24;
  out[o++] = (adler >>> 16) & 0xff;
  out[o++] = (adler >>> 8) & 0xff;
  out[o++] = adler & 0xff;
  return out;
}
