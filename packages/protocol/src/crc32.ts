/**
 * CRC-32 with the zlib / IEEE 802.3 polynomial (reflected 0xEDB88320), as zlib's `crc32()`.
 * `crc32(ascii("123456789")) === 0xCBF43926`. Slicing-by-4 tables; no allocation per call.
 */
const TABLES: Uint32Array = (() => {
  const t = new Uint32Array(256 * 4);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 4; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c >>> 0;
    }
  }
  return t;
})();

/**
 * Continues a CRC-32 over `bytes[start..end)`. Start a new checksum with `crc = 0`, as zlib does.
 * @returns the unsigned 32-bit checksum.
 */
export function crc32Update(crc: number, bytes: Uint8Array, start = 0, end: number = bytes.length): number {
  const t = TABLES;
  let c = ~crc >>> 0;
  let i = start;
  const end4 = end - ((end - start) & 3);
  while (i < end4) {
    c ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    c = t[768 + (c & 0xff)]! ^ t[512 + ((c >>> 8) & 0xff)]! ^ t[256 + ((c >>> 16) & 0xff)]! ^ t[c >>> 24]!;
    i += 4;
  }
  while (i < end) c = t[(c ^ bytes[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** CRC-32 (zlib polynomial) of `bytes[start..end)`. */
export function crc32(bytes: Uint8Array, start = 0, end: number = bytes.length): number {
  return crc32Update(0, bytes, start, end);
}
