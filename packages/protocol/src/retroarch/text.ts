import { EncodeError } from '../errors.js';

const utf8Decoder = new TextDecoder('utf-8', { fatal: false });
const utf8Encoder = new TextEncoder();

/**
 * Decodes a NUL-padded char[N] field: the bytes before the first NUL as UTF-8 (invalid sequences
 * become U+FFFD), or all N bytes when there is no NUL. Bytes after the NUL are ignored.
 */
export function decodeFixedText(bytes: Uint8Array): string {
  const nul = bytes.indexOf(0);
  return utf8Decoder.decode(nul < 0 ? bytes : bytes.subarray(0, nul));
}

/**
 * Encodes `text` as a NUL-padded char[size] field (a fresh array; cold path). The UTF-8 text must
 * leave room for the terminating NUL, as RetroArch's `strlcpy` would.
 * @throws EncodeError `too-long`, or `out-of-range` for a text containing NUL (it would be cut there).
 */
export function encodeFixedText(text: string, size: number, field: string): Uint8Array {
  if (text.includes('\0')) throw new EncodeError('out-of-range', `${field} must not contain NUL`);
  const out = new Uint8Array(size);
  const { read, written } = utf8Encoder.encodeInto(text, out);
  if (read < text.length || written >= size) {
    throw new EncodeError('too-long', `${field} "${text}" does not fit ${size - 1} UTF-8 bytes`);
  }
  return out;
}

/** UTF-8 bytes of `text` (a fresh array). */
export function utf8Bytes(text: string): Uint8Array {
  return utf8Encoder.encode(text);
}

/** Decodes UTF-8 bytes leniently. */
export function utf8Text(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}
