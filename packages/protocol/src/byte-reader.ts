import { checkOffset, checkRange } from './byte-range.js';
import { DecodeError } from './errors.js';

const latin1 = new TextDecoder('latin1');
const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * A bounds-checked big-endian reader over a byte range, for cold-path decoders. Every read that
 * would pass the end throws `DecodeError('truncated')` naming the field; nothing else is thrown.
 * The range `[start, end)` is checked when the reader is made: `bad-range` unless `start` and
 * `end` are integers with `0 ≤ start ≤ end`, `truncated` when the range passes the end of `bytes`.
 */
export class ByteReader {
  private readonly view: DataView;
  /** Current absolute offset into `bytes`. */
  offset: number;
  /** End of the readable range (exclusive). */
  readonly end: number;

  constructor(
    /** The buffer read from; reads stay within `[start, end)` of it, and offsets are absolute indices into it. */
    readonly bytes: Uint8Array,
    start = 0,
    end: number = bytes.length,
  ) {
    checkOffset(start, 'ByteReader');
    if (end >>> 0 !== end)
      throw new DecodeError('bad-range', start, `ByteReader: end ${end} is not an integer 0..2^32-1`);
    checkRange(bytes, start, end === bytes.length ? undefined : end - start, 'ByteReader');
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = start;
    this.end = end;
  }

  /** Bytes left to read. */
  get remaining(): number {
    return this.end - this.offset;
  }

  /** Throws `truncated` unless `n` more bytes are available (`bad-range` unless `n` is an integer 0..2^32−1). */
  need(n: number, field: string): void {
    if (n >>> 0 !== n) {
      throw new DecodeError('bad-range', this.offset, `${field}: ${n} bytes is not an integer 0..2^32-1`);
    }
    if (n > this.end - this.offset) {
      throw new DecodeError('truncated', this.offset, `${field} needs ${n} bytes but ${this.end - this.offset} remain`);
    }
  }

  /** Reads an unsigned byte; `field` names it in the `DecodeError` when too few bytes remain. */
  u8(field: string): number {
    this.need(1, field);
    return this.view.getUint8(this.offset++);
  }

  /** Reads an unsigned 16-bit integer (big-endian unless `littleEndian`); `field` names it in the `DecodeError` when too few bytes remain. */
  u16(field: string, littleEndian = false): number {
    this.need(2, field);
    const v = this.view.getUint16(this.offset, littleEndian);
    this.offset += 2;
    return v;
  }

  /** Reads an unsigned 32-bit integer (big-endian unless `littleEndian`); `field` names it in the `DecodeError` when too few bytes remain. */
  u32(field: string, littleEndian = false): number {
    this.need(4, field);
    const v = this.view.getUint32(this.offset, littleEndian);
    this.offset += 4;
    return v;
  }

  /** Reads a signed 32-bit integer (big-endian unless `littleEndian`); `field` names it in the `DecodeError` when too few bytes remain. */
  i32(field: string, littleEndian = false): number {
    this.need(4, field);
    const v = this.view.getInt32(this.offset, littleEndian);
    this.offset += 4;
    return v;
  }

  /** Reads a 64-bit float (big-endian unless `littleEndian`); `field` names it in the `DecodeError` when too few bytes remain. */
  f64(field: string, littleEndian = false): number {
    this.need(8, field);
    const v = this.view.getFloat64(this.offset, littleEndian);
    this.offset += 8;
    return v;
  }

  /** A view (no copy) of the next `n` bytes. */
  bytesView(n: number, field: string): Uint8Array {
    this.need(n, field);
    const v = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** A copy of the next `n` bytes. */
  bytesCopy(n: number, field: string): Uint8Array {
    return this.bytesView(n, field).slice();
  }

  /** A NUL-padded fixed-size string field: the text up to the first NUL, decoded as UTF-8. */
  fixedString(size: number, field: string): string {
    const raw = this.bytesView(size, field);
    const nul = raw.indexOf(0);
    return utf8.decode(nul < 0 ? raw : raw.subarray(0, nul));
  }

  /** A fixed-size field decoded byte for byte as Latin-1 (every byte maps to one char). */
  latin1(size: number, field: string): string {
    return latin1.decode(this.bytesView(size, field));
  }

  /** Throws `trailing-bytes` unless everything was read. */
  expectEnd(what: string): void {
    if (this.offset !== this.end) {
      throw new DecodeError('trailing-bytes', this.offset, `${this.end - this.offset} unexpected bytes after ${what}`);
    }
  }
}
