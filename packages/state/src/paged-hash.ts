import { hash64, murmur3x86_128Into } from './hash64.js';

const lanes = new Uint32Array(4);

/** Number of pages of `pageSize` bytes that cover `bytes` bytes (the last one may be short). */
export function pageCountOf(bytes: number, pageSize: number): number {
  return Math.ceil(bytes / pageSize);
}

/**
 * Writes `hash64` of page `page` of `state` (pages of `pageSize` bytes, the last one may be
 * short) as a little-endian u64 at `out[page * 8]`. Allocates nothing.
 */
export function writePageHash(state: Uint8Array, pageSize: number, page: number, out: Uint8Array): void {
  const start = page * pageSize;
  murmur3x86_128Into(state, start, Math.min(state.length, start + pageSize), 0, lanes);
  const o = page * 8;
  const h1 = lanes[0]!;
  const h2 = lanes[1]!;
  out[o] = h1;
  out[o + 1] = h1 >>> 8;
  out[o + 2] = h1 >>> 16;
  out[o + 3] = h1 >>> 24;
  out[o + 4] = h2;
  out[o + 5] = h2 >>> 8;
  out[o + 6] = h2 >>> 16;
  out[o + 7] = h2 >>> 24;
}

/**
 * The page hashes of `state`: `hash64` of every page of `pageSize` bytes, each a little-endian
 * u64, in page order (8 bytes per page). `out` must hold at least 8 × pages bytes.
 */
export function pageHashesInto(state: Uint8Array, pageSize: number, out: Uint8Array): Uint8Array {
  const pages = pageCountOf(state.length, pageSize);
  for (let p = 0; p < pages; p++) writePageHash(state, pageSize, p, out);
  return out.subarray(0, pages * 8);
}

/**
 * The paged hash of a state: `hash64` of its page hashes ({@link pageHashesInto}: `hash64` of each
 * `pageSize`-byte page, as little-endian u64s in page order). Version 2 page deltas carry it
 * instead of `hash64` of the whole state, because it can be updated page by page: a
 * {@link DeltaBase} keeps the base's page hashes and rehashes only the pages that changed.
 * Detects the same changes as `hash64` (a change to any page changes that page's hash).
 */
export function pagedHash64(state: Uint8Array, pageSize: number): bigint {
  const hashes = new Uint8Array(pageCountOf(state.length, pageSize) * 8);
  return hash64(pageHashesInto(state, pageSize, hashes));
}
