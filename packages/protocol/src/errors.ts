/** Why a byte string could not be decoded. */
export type DecodeErrorCode =
  /** The input ended before the message did. */
  | 'truncated'
  /** A length field announces more than the configured maximum. */
  | 'too-large'
  /** A magic number or identifier did not match. */
  | 'bad-magic'
  /** A checksum did not match. */
  | 'bad-checksum'
  /** A field holds a value the format does not allow. */
  | 'bad-value'
  /** A payload length does not fit the message type. */
  | 'bad-length'
  /** A command or message type is not known. */
  | 'unknown-type'
  /** Bytes were left over after a complete message. */
  | 'trailing-bytes'
  /**
   * The offset or length a caller passed to locate a message in a larger buffer is not an integer
   * 0..2^32−1 (negative, fractional, NaN, ±Infinity or too large). A range that is well formed but
   * passes the end of the buffer is `truncated` instead.
   */
  | 'bad-range';

/**
 * The one error decoders throw: a typed `code`, the byte `offset` where decoding failed and a
 * message naming what was wrong. Decoders never throw anything else on any input.
 */
export class DecodeError extends Error {
  /** Always `'DecodeError'`: starts `String(error)` and the stack, and identifies it where `instanceof` fails. */
  override readonly name = 'DecodeError';
  constructor(
    /** What kind of problem it is. */
    readonly code: DecodeErrorCode,
    /** Offset in the input at which the problem was found. */
    readonly offset: number,
    message: string,
  ) {
    super(`${message} (${code} at byte ${offset})`);
  }
}

/** Why a value could not be encoded. */
export type EncodeErrorCode =
  /** A number does not fit its field. */
  | 'out-of-range'
  /** A string or array is longer than its field. */
  | 'too-long'
  /** The destination buffer is too small. */
  | 'buffer-too-small';

/** Thrown by encoders when a value cannot be written as asked. */
export class EncodeError extends Error {
  /** Always `'EncodeError'`: starts `String(error)` and the stack, and identifies it where `instanceof` fails. */
  override readonly name = 'EncodeError';
  constructor(
    /** What kind of problem it is: a value outside its field's range, a text or array too long, a buffer too small. */
    readonly code: EncodeErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}
