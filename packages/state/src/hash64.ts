import { LITTLE_ENDIAN_HOST } from './endian.js';

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

// One-entry cache of a Uint32Array over the last buffer hashed, so the aligned fast path
// allocates nothing in steady state (a rollback loop hashes the same buffers every frame).
let cachedBuffer: ArrayBufferLike | undefined;
let cachedWords: Uint32Array = new Uint32Array(0);

function wordsOf(buffer: ArrayBufferLike): Uint32Array {
  if (buffer !== cachedBuffer || cachedWords.length !== buffer.byteLength >>> 2) {
    cachedWords = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    cachedBuffer = buffer;
  }
  return cachedWords;
}

/** The four 32-bit lanes of the last digest; reused, so `murmur3x86_128Into` allocates nothing. */
const lanes = new Uint32Array(4);
/** The first two lanes as one u64 (h1 | h2 << 32 on a little-endian host): one bigint per hash. */
const low64 = new BigUint64Array(lanes.buffer, 0, 1);

/**
 * MurmurHash3_x86_128 (Austin Appleby, SMHasher) of `bytes[start..end)` with a 32-bit seed.
 * Writes the digest as four 32-bit words h1..h4 into `out` (the canonical byte output is the
 * four words little-endian, h1 first). Only 32-bit integer arithmetic, no allocation.
 */
export function murmur3x86_128Into(
  bytes: Uint8Array,
  start: number,
  end: number,
  seed: number,
  out: Uint32Array,
): void {
  const len = end - start;
  let h1 = seed | 0;
  let h2 = h1;
  let h3 = h1;
  let h4 = h1;
  const blocks = len >>> 4;
  let i = start;
  const blockEnd = start + (blocks << 4);
  const abs = bytes.byteOffset + start;
  if (LITTLE_ENDIAN_HOST && (abs & 3) === 0 && blocks > 0) {
    const w = wordsOf(bytes.buffer);
    let j = abs >>> 2;
    const jEnd = j + (blocks << 2);
    while (j < jEnd) {
      let k1 = w[j]!;
      let k2 = w[j + 1]!;
      let k3 = w[j + 2]!;
      let k4 = w[j + 3]!;
      j += 4;
      k1 = Math.imul(k1, C1);
      k1 = (k1 << 15) | (k1 >>> 17);
      h1 ^= Math.imul(k1, C2);
      h1 = (h1 << 19) | (h1 >>> 13);
      h1 = (h1 + h2) | 0;
      h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0;
      k2 = Math.imul(k2, C2);
      k2 = (k2 << 16) | (k2 >>> 16);
      h2 ^= Math.imul(k2, C3);
      h2 = (h2 << 17) | (h2 >>> 15);
      h2 = (h2 + h3) | 0;
      h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0;
      k3 = Math.imul(k3, C3);
      k3 = (k3 << 17) | (k3 >>> 15);
      h3 ^= Math.imul(k3, C4);
      h3 = (h3 << 15) | (h3 >>> 17);
      h3 = (h3 + h4) | 0;
      h3 = (Math.imul(h3, 5) + 0x96cd1c35) | 0;
      k4 = Math.imul(k4, C4);
      k4 = (k4 << 18) | (k4 >>> 14);
      h4 ^= Math.imul(k4, C1);
      h4 = (h4 << 13) | (h4 >>> 19);
      h4 = (h4 + h1) | 0;
      h4 = (Math.imul(h4, 5) + 0x32ac3b17) | 0;
    }
    i = blockEnd;
  } else {
    while (i < blockEnd) {
      let k1 = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
      let k2 = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
      let k3 = bytes[i + 8]! | (bytes[i + 9]! << 8) | (bytes[i + 10]! << 16) | (bytes[i + 11]! << 24);
      let k4 = bytes[i + 12]! | (bytes[i + 13]! << 8) | (bytes[i + 14]! << 16) | (bytes[i + 15]! << 24);
      i += 16;
      k1 = Math.imul(k1, C1);
      k1 = (k1 << 15) | (k1 >>> 17);
      h1 ^= Math.imul(k1, C2);
      h1 = (h1 << 19) | (h1 >>> 13);
      h1 = (h1 + h2) | 0;
      h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0;
      k2 = Math.imul(k2, C2);
      k2 = (k2 << 16) | (k2 >>> 16);
      h2 ^= Math.imul(k2, C3);
      h2 = (h2 << 17) | (h2 >>> 15);
      h2 = (h2 + h3) | 0;
      h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0;
      k3 = Math.imul(k3, C3);
      k3 = (k3 << 17) | (k3 >>> 15);
      h3 ^= Math.imul(k3, C4);
      h3 = (h3 << 15) | (h3 >>> 17);
      h3 = (h3 + h4) | 0;
      h3 = (Math.imul(h3, 5) + 0x96cd1c35) | 0;
      k4 = Math.imul(k4, C4);
      k4 = (k4 << 18) | (k4 >>> 14);
      h4 ^= Math.imul(k4, C1);
      h4 = (h4 << 13) | (h4 >>> 19);
      h4 = (h4 + h1) | 0;
      h4 = (Math.imul(h4, 5) + 0x32ac3b17) | 0;
    }
  }
  // Tail: up to 15 bytes, in the reference's fall-through order.
  const rest = len & 15;
  let k1 = 0;
  let k2 = 0;
  let k3 = 0;
  let k4 = 0;
  if (rest > 12) {
    if (rest >= 15) k4 ^= bytes[i + 14]! << 16;
    if (rest >= 14) k4 ^= bytes[i + 13]! << 8;
    k4 ^= bytes[i + 12]!;
    k4 = Math.imul(k4, C4);
    k4 = (k4 << 18) | (k4 >>> 14);
    h4 ^= Math.imul(k4, C1);
  }
  if (rest > 8) {
    if (rest >= 12) k3 ^= bytes[i + 11]! << 24;
    if (rest >= 11) k3 ^= bytes[i + 10]! << 16;
    if (rest >= 10) k3 ^= bytes[i + 9]! << 8;
    k3 ^= bytes[i + 8]!;
    k3 = Math.imul(k3, C3);
    k3 = (k3 << 17) | (k3 >>> 15);
    h3 ^= Math.imul(k3, C4);
  }
  if (rest > 4) {
    if (rest >= 8) k2 ^= bytes[i + 7]! << 24;
    if (rest >= 7) k2 ^= bytes[i + 6]! << 16;
    if (rest >= 6) k2 ^= bytes[i + 5]! << 8;
    k2 ^= bytes[i + 4]!;
    k2 = Math.imul(k2, C2);
    k2 = (k2 << 16) | (k2 >>> 16);
    h2 ^= Math.imul(k2, C3);
  }
  if (rest > 0) {
    if (rest >= 4) k1 ^= bytes[i + 3]! << 24;
    if (rest >= 3) k1 ^= bytes[i + 2]! << 16;
    if (rest >= 2) k1 ^= bytes[i + 1]! << 8;
    k1 ^= bytes[i]!;
    k1 = Math.imul(k1, C1);
    k1 = (k1 << 15) | (k1 >>> 17);
    h1 ^= Math.imul(k1, C2);
  }
  h1 ^= len;
  h2 ^= len;
  h3 ^= len;
  h4 ^= len;
  h1 = (h1 + h2) | 0;
  h1 = (h1 + h3) | 0;
  h1 = (h1 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h3 = fmix32(h3);
  h4 = fmix32(h4);
  h1 = (h1 + h2) | 0;
  h1 = (h1 + h3) | 0;
  h1 = (h1 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  out[0] = h1;
  out[1] = h2;
  out[2] = h3;
  out[3] = h4;
}

/**
 * The 64-bit state hash used for desync detection: the first 64 bits of MurmurHash3_x86_128
 * (seed 0) of `bytes[start..end)`, that is h1 | h2 << 32, the first eight bytes of the canonical
 * digest read little-endian. It runs on 32-bit integer arithmetic only (no per-byte BigInt) and
 * reads aligned input a word at a time; only the returned bigint is allocated.
 */
export function hash64(bytes: Uint8Array, start = 0, end: number = bytes.length): bigint {
  murmur3x86_128Into(bytes, start, end, 0, lanes);
  return LITTLE_ENDIAN_HOST ? low64[0]! : (BigInt(lanes[1]!) << 32n) | BigInt(lanes[0]!);
}
