import { DecodeError } from './errors.js';

/*
 * The offset and length a caller passes to a decoder come from the caller's own parsing of a larger
 * buffer, so a bad one is a decoding failure like any other: `DecodeError('bad-range')`, never a
 * `RangeError` or a read at a wrong index. `x >>> 0 === x` holds exactly for the integers 0..2^32−1
 * (NaN, ±Infinity, negatives, fractions and 2^32 up fail it) and is cheap on hot paths.
 */

/**
 * Checks an offset into `bytes` given by the caller: an integer 0..2^32−1, else
 * `DecodeError('bad-range')` at byte 0 (no byte could be located). An offset past the end passes:
 * each decoder says what that means (`truncated`, or "not complete yet" for a stream reader).
 */
export function checkOffset(offset: number, what: string): void {
  if (offset >>> 0 !== offset) {
    throw new DecodeError('bad-range', 0, `${what}: offset ${offset} is not an integer 0..2^32-1`);
  }
}

/**
 * Checks the range `bytes[offset, offset + length)` given by the caller and returns its end;
 * without a length the range runs to the end of `bytes`. `DecodeError('bad-range')` at byte 0 for
 * an offset, or at `offset` for a length, that is not an integer 0..2^32−1;
 * `DecodeError('truncated')` at `bytes.length` when the range passes the end.
 */
export function checkRange(bytes: Uint8Array, offset: number, length: number | undefined, what: string): number {
  checkOffset(offset, what);
  if (length === undefined) {
    if (offset > bytes.length) {
      throw new DecodeError('truncated', bytes.length, `${what} offset ${offset} passes the end (${bytes.length})`);
    }
    return bytes.length;
  }
  if (length >>> 0 !== length) {
    throw new DecodeError('bad-range', offset, `${what}: length ${length} is not an integer 0..2^32-1`);
  }
  const end = offset + length;
  if (end > bytes.length) {
    throw new DecodeError('truncated', bytes.length, `${what} [${offset}, ${end}) passes the end (${bytes.length})`);
  }
  return end;
}
