import { Z_FINISH, Z_OK, Z_STREAM_END, ZStream, zlibInflate, zlibInflateEnd, zlibInflateInit2 } from 'pako';
import { DeltaError } from './errors.js';

/**
 * The most bytes one byte of a zlib stream can inflate to: deflate's best case is a 258-byte match
 * coded in 2 bits (a 1-bit length code and a 1-bit distance code), so no stream inflates to more
 * than 1032 times its size.
 */
export const MAX_INFLATE_RATIO = 1032;

/**
 * An upper bound of what a zlib stream of `compressedBytes` bytes can inflate to
 * ({@link MAX_INFLATE_RATIO} times its size). A size announced next to a stream that is larger
 * than this is a lie, and can be refused before a buffer of that size is allocated.
 */
export function maxInflatedBytes(compressedBytes: number): number {
  return compressedBytes * MAX_INFLATE_RATIO;
}

/**
 * Inflates the zlib stream `src` into `dst` and returns how many bytes it produced. The output
 * can never exceed `dst`: a stream that would produce more, ends early, is malformed or is
 * followed by extra bytes fails with `DeltaError('corrupt')`. Allocates only zlib's fixed
 * inflate state and window, whatever the input.
 */
export function inflateBounded(src: Uint8Array, dst: Uint8Array<ArrayBuffer>): number {
  const strm = new ZStream();
  if (zlibInflateInit2(strm, 15) !== Z_OK) throw new DeltaError('corrupt', 'cannot start inflate');
  strm.input = src;
  strm.next_in = 0;
  strm.avail_in = src.length;
  strm.output = dst;
  strm.next_out = 0;
  strm.avail_out = dst.length;
  let status: number;
  try {
    status = zlibInflate(strm, Z_FINISH);
  } catch {
    throw new DeltaError('corrupt', 'compressed data is malformed');
  } finally {
    zlibInflateEnd(strm);
  }
  if (status !== Z_STREAM_END) {
    const why = strm.avail_out === 0 ? 'inflates to more than the stated size' : strm.msg || 'ends early';
    throw new DeltaError('corrupt', `compressed data ${why}`);
  }
  if (strm.avail_in !== 0) throw new DeltaError('corrupt', `${strm.avail_in} bytes after the compressed data`);
  return strm.total_out;
}

/**
 * A bounded zlib inflater for {@link applyDelta}: the stream `src` inflated into a new buffer of at
 * most `maxBytes` bytes, which the caller keeps. A stream that is malformed, ends early, is followed
 * by extra bytes or would inflate to more than `maxBytes` fails with `DeltaError('corrupt')`, and
 * what it allocates is bounded by `maxBytes` (plus zlib's fixed state), whatever the input.
 */
export type InflateBounded = (src: Uint8Array, maxBytes: number) => Uint8Array<ArrayBuffer>;

/**
 * pako's inflate into a buffer of `maxBytes` ({@link inflateBounded}): every platform, the default
 * of `applyDelta`. `nodeInflateBounded` from `@netplay/state/node` is node:zlib's.
 */
export const pakoInflateBounded: InflateBounded = (src, maxBytes) => {
  const dst = new Uint8Array(maxBytes);
  const n = inflateBounded(src, dst);
  return n === maxBytes ? dst : dst.subarray(0, n);
};
