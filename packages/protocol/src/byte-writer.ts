import { EncodeError } from './errors.js';

const utf8 = new TextEncoder();

/**
 * Writes `text` as UTF-8 into a NUL-padded field of `size` bytes at `offset`. The text must
 * leave room for at least one NUL (C strings); a longer one throws `EncodeError('too-long')`.
 */
export function writeFixedString(target: Uint8Array, offset: number, size: number, text: string, field: string): void {
  const field_ = target.subarray(offset, offset + size);
  field_.fill(0);
  const { written, read } = utf8.encodeInto(text, field_);
  if (read < text.length || written >= size) {
    throw new EncodeError('too-long', `${field} "${text}" does not fit ${size - 1} bytes`);
  }
}

/** Throws `EncodeError('out-of-range')` unless `v` is an integer in [0, 2^32). */
export function checkU32(v: number, field: string): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    throw new EncodeError('out-of-range', `${field} ${v} is not a u32`);
  }
  return v;
}
