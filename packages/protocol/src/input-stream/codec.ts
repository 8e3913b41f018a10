import { checkRange } from '../byte-range.js';
import { DecodeError, EncodeError } from '../errors.js';

/*
 * Input stream: several consecutive frames of fixed-size inputs in one packet, as XOR against the
 * previous frame plus run lengths of zero bits. Layout (big-endian), see docs/input-stream.md:
 *
 *   0  u32  startFrame   frame number of the first input
 *   4  u8   frameCount   1..255
 *   5  u16  inputSize    bytes per frame, 1..65535
 *   7  u8   flags        bit 0 = REFERENCE: frame startFrame−1 is the XOR base of the first frame
 *                        (the decoder must supply it); clear = the base is all zeros. Bits 1–7 are 0.
 *   8  runs              canonical LEB128 varints (1–4 bytes each), see below
 *
 * The diff stream D is frame[f] XOR frame[f−1] for f = 0..frameCount−1 (frame[−1] = base),
 * concatenated: frameCount·inputSize·8 bits, bit i being bit (i mod 8) (LSB = 0) of byte ⌊i/8⌋.
 * The runs are, for every set bit of D in order, the number of zero bits before it (since the
 * previous set bit), then one last run: the zero bits up to the end of D.
 */

/** Size of the input-stream header in bytes. */
export const INPUT_STREAM_HEADER_SIZE = 8;
/** Most frames one packet can carry. */
export const INPUT_STREAM_MAX_FRAMES = 255;
/** Largest input size in bytes. */
export const INPUT_STREAM_MAX_INPUT_SIZE = 0xffff;
/** Default bound on frameCount × inputSize accepted by the decoder (64 KiB). */
export const INPUT_STREAM_DEFAULT_MAX_BYTES = 64 * 1024;
/** Flag bit: the first frame is XORed against frame startFrame − 1, which the decoder supplies. */
export const INPUT_STREAM_FLAG_REFERENCE = 1;

/** The header fields of an input-stream packet. */
export interface InputStreamHeader {
  /** Frame number of the first input (uint32). */
  startFrame: number;
  /** How many frames follow (1–255). */
  frameCount: number;
  /** Bytes per frame (1–65535). */
  inputSize: number;
}

/** A decoded header, which also says whether a reference frame is needed. */
export interface InputStreamHeaderInfo extends InputStreamHeader {
  /** True when the first frame is XORed against frame `startFrame − 1` (the decoder must know it). */
  hasReference: boolean;
}

/**
 * Where a packet lies inside a larger buffer: `bytes[offset, offset + length)`. Lets a caller
 * decode a stream that follows a header of its own without copying it out first. Error offsets
 * stay relative to the whole buffer.
 */
export interface InputStreamRange {
  /** Index of the packet's first byte in `bytes` (default 0); an integer 0..2^32−1, else `DecodeError('bad-range')`. */
  offset?: number;
  /**
   * The packet's size in bytes (default: up to the end of `bytes`); an integer 0..2^32−1, else
   * `DecodeError('bad-range')`. Bytes after it are ignored. A range passing the end of `bytes` is
   * `DecodeError('truncated')`.
   */
  length?: number;
}

/** Options for {@link decodeInputStream}. Reuse one object to decode without allocating. */
export interface InputStreamDecodeOptions extends InputStreamRange {
  /** The input of frame `startFrame − 1` (`inputSize` bytes); required when the packet says so. */
  reference?: Uint8Array | undefined;
  /** Refuse packets announcing more than this many decoded bytes (default 64 KiB). */
  maxBytes?: number;
  /** Filled with the packet's header, if given. */
  header?: InputStreamHeaderInfo;
}

/** Upper bound of the encoded size of `frameCount` frames of `inputSize` bytes: 8 + bits + 1. */
export function inputStreamMaxEncodedSize(frameCount: number, inputSize: number): number {
  return INPUT_STREAM_HEADER_SIZE + frameCount * inputSize * 8 + 1;
}

function varintLength(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : 4;
}

function tooSmall(end: number): EncodeError {
  return new EncodeError('buffer-too-small', `input stream does not fit the target (${end} bytes)`);
}

/** Writes `v` (< 2^28) as LEB128 at `p`; returns the new position. */
function writeVarint(target: Uint8Array, p: number, end: number, v: number): number {
  if (v < 0x80) {
    if (p >= end) throw tooSmall(end);
    target[p] = v;
    return p + 1;
  }
  if (p + varintLength(v) > end) throw tooSmall(end);
  while (v >= 0x80) {
    target[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  target[p++] = v;
  return p;
}

/** Writes the 8-byte header at `offset` (checked by the caller). */
function writeHeader(
  target: Uint8Array,
  offset: number,
  startFrame: number,
  frameCount: number,
  inputSize: number,
  flags: number,
): void {
  target[offset] = startFrame >>> 24;
  target[offset + 1] = startFrame >>> 16;
  target[offset + 2] = startFrame >>> 8;
  target[offset + 3] = startFrame;
  target[offset + 4] = frameCount;
  target[offset + 5] = inputSize >>> 8;
  target[offset + 6] = inputSize;
  target[offset + 7] = flags;
}

/**
 * Writes one run per set bit of the diff byte `d` (bits from LSB up); `run` is the count of zero
 * bits before this byte since the last set bit. Returns the new position.
 */
function emitRuns(target: Uint8Array, p: number, end: number, run: number, d: number): number {
  let used = 0;
  do {
    const low = d & -d;
    const tz = 31 - Math.clz32(low);
    p = writeVarint(target, p, end, run + tz - used);
    run = 0;
    used = tz + 1;
    d ^= low;
  } while (d !== 0);
  return p;
}

/**
 * Encodes `header.frameCount` frames of `header.inputSize` bytes, taken from the start of
 * `inputs`, into `target` at `offset`; returns the bytes written. With a `reference` (the input of
 * frame `startFrame − 1`, which the receiver must already have) the first frame is XORed against
 * it and the REFERENCE flag is set; without, against zeros. Allocates nothing. Throws
 * `EncodeError('buffer-too-small')` when `target` runs out (see {@link inputStreamMaxEncodedSize}).
 */
export function encodeInputStream(
  header: InputStreamHeader,
  inputs: Uint8Array,
  reference: Uint8Array | undefined,
  target: Uint8Array,
  offset = 0,
): number {
  const startFrame = header.startFrame;
  const frameCount = header.frameCount;
  const inputSize = header.inputSize;
  const n = frameCount * inputSize;
  const end = target.length;
  // Every check in one branch (integer ranges as bit operations); encodeFailure names the problem.
  if (
    startFrame >>> 0 !== startFrame ||
    (frameCount & 0xff) !== frameCount ||
    frameCount === 0 ||
    (inputSize & 0xffff) !== inputSize ||
    inputSize === 0 ||
    inputs.length < n ||
    (reference !== undefined && reference.length !== inputSize) ||
    !(offset >= 0 && offset + INPUT_STREAM_HEADER_SIZE + 1 <= end)
  )
    throw encodeFailure(header, inputs, reference, target, offset);
  writeHeader(
    target,
    offset,
    startFrame,
    frameCount,
    inputSize,
    reference === undefined ? 0 : INPUT_STREAM_FLAG_REFERENCE,
  );
  let p = offset + INPUT_STREAM_HEADER_SIZE;
  let run = 0;
  // The common case is a zero diff byte (+8 to the run); a byte with one set bit (a button pressed
  // or released) after a run below 121 bits is one 1-byte varint, written here; any other byte
  // goes through emitRuns. After a non-zero byte d the open run is the zero bits above its highest
  // set bit: clz32(d) − 24. Kept under V8's inlining limit (460 bytes of bytecode) so that the
  // encoder inlines into its caller: at 611 bytes it never did (0.56× the raw loop), and whether
  // V8 then inlined emitRuns as well made runs bimodal (0.49× or 0.71×).
  for (let i = 0; i < n; i++) {
    const d = inputs[i]! ^ (i >= inputSize ? inputs[i - inputSize]! : reference === undefined ? 0 : reference[i]!);
    if (d === 0) run += 8;
    else {
      if ((d & (d - 1)) === 0 && run < 121 && p < end) target[p++] = run + 31 - Math.clz32(d);
      else p = emitRuns(target, p, end, run, d);
      run = Math.clz32(d) - 24;
    }
  }
  p = writeVarint(target, p, end, run);
  return p - offset;
}

/** The error {@link encodeInputStream} throws for arguments it refused, in the order it checks them. */
function encodeFailure(
  header: InputStreamHeader,
  inputs: Uint8Array,
  reference: Uint8Array | undefined,
  target: Uint8Array,
  offset: number,
): EncodeError {
  const { startFrame, frameCount, inputSize } = header;
  if (startFrame >>> 0 !== startFrame) return new EncodeError('out-of-range', `startFrame ${startFrame}`);
  if ((frameCount & 0xff) !== frameCount || frameCount === 0)
    return new EncodeError('out-of-range', `frameCount ${frameCount} is not 1..255`);
  if ((inputSize & 0xffff) !== inputSize || inputSize === 0)
    return new EncodeError('out-of-range', `inputSize ${inputSize} is not 1..65535`);
  const n = frameCount * inputSize;
  if (inputs.length < n) return new EncodeError('out-of-range', `inputs hold ${inputs.length} bytes, need ${n}`);
  if (reference !== undefined && reference.length !== inputSize)
    return new EncodeError('out-of-range', `reference holds ${reference.length} bytes, inputSize is ${inputSize}`);
  return new EncodeError(
    'buffer-too-small',
    `input stream needs at least 9 bytes at offset ${offset} of ${target.length}`,
  );
}

/** The XOR base of output byte `i`: the same byte one frame earlier, or the reference / zero. */
function baseByte(out: Uint8Array, i: number, inputSize: number, reference: Uint8Array | undefined): number {
  return i >= inputSize ? out[i - inputSize]! : reference === undefined ? 0 : reference[i]!;
}

/** Writes output bytes [from, to) whose diff is zero: each is its base. */
function copyBase(
  out: Uint8Array,
  from: number,
  to: number,
  inputSize: number,
  reference: Uint8Array | undefined,
): void {
  let i = from;
  if (i < inputSize) {
    const limit = Math.min(to, inputSize);
    if (reference === undefined) for (; i < limit; i++) out[i] = 0;
    else for (; i < limit; i++) out[i] = reference[i]!;
  }
  for (; i < to; i++) out[i] = out[i - inputSize]!;
}

/**
 * Reads and checks the 8-byte header (`truncated` if shorter, `bad-value` for a zero frame count,
 * zero input size or unknown flag bits). Fills `into` when given. With `range`, the packet is
 * `bytes[range.offset, range.offset + range.length)` (see {@link InputStreamRange}).
 */
export function readInputStreamHeader(
  bytes: Uint8Array,
  into?: InputStreamHeaderInfo,
  range?: InputStreamRange,
): InputStreamHeaderInfo {
  const at = range?.offset ?? 0;
  checkHeader(bytes, at, checkRange(bytes, at, range?.length, 'input stream'));
  const h = into ?? { startFrame: 0, frameCount: 0, inputSize: 0, hasReference: false };
  fillHeader(bytes, at, h);
  return h;
}

function checkHeader(bytes: Uint8Array, at: number, end: number): void {
  if (end - at < INPUT_STREAM_HEADER_SIZE) {
    throw new DecodeError('truncated', end, `input stream header needs 8 bytes, got ${end - at}`);
  }
  if (bytes[at + 4] === 0) throw new DecodeError('bad-value', at + 4, 'frameCount is 0');
  if (bytes[at + 5] === 0 && bytes[at + 6] === 0) throw new DecodeError('bad-value', at + 5, 'inputSize is 0');
  const flags = bytes[at + 7]!;
  if ((flags & ~INPUT_STREAM_FLAG_REFERENCE) !== 0) {
    throw new DecodeError('bad-value', at + 7, `unknown flags ${flags}`);
  }
}

function readStartFrame(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function fillHeader(bytes: Uint8Array, at: number, h: InputStreamHeaderInfo): void {
  h.startFrame = readStartFrame(bytes, at);
  h.frameCount = bytes[at + 4]!;
  h.inputSize = (bytes[at + 5]! << 8) | bytes[at + 6]!;
  h.hasReference = bytes[at + 7] !== 0;
}

/**
 * frameCount × inputSize of a packet: the bytes {@link decodeInputStream} will write. Reads only
 * the header, at `range.offset` when given.
 */
export function inputStreamDecodedSize(bytes: Uint8Array, range?: InputStreamRange): number {
  const at = range?.offset ?? 0;
  checkHeader(bytes, at, checkRange(bytes, at, range?.length, 'input stream'));
  return bytes[at + 4]! * ((bytes[at + 5]! << 8) | bytes[at + 6]!);
}

/**
 * Throws the error {@link decodeInputStream} reports for a packet or options its fast checks
 * refused, checking in the documented order (range, header, sizes, reference); fills
 * `options.header` once the header is valid, as the decoder does.
 */
function decodeFailure(bytes: Uint8Array, out: Uint8Array, options: InputStreamDecodeOptions | undefined): never {
  const at = options?.offset ?? 0;
  const len = checkRange(bytes, at, options?.length, 'input stream');
  checkHeader(bytes, at, len);
  if (options?.header !== undefined) fillHeader(bytes, at, options.header);
  const n = bytes[at + 4]! * ((bytes[at + 5]! << 8) | bytes[at + 6]!);
  const maxBytes = options?.maxBytes ?? INPUT_STREAM_DEFAULT_MAX_BYTES;
  if (n > maxBytes) throw new DecodeError('too-large', at + 4, `${n} decoded bytes exceed the maximum ${maxBytes}`);
  if (n > out.length) {
    throw new DecodeError('too-large', at + 4, `${n} decoded bytes exceed the output buffer (${out.length})`);
  }
  const reference = options?.reference;
  if (reference === undefined) {
    const base = readStartFrame(bytes, at) - 1;
    throw new DecodeError('bad-value', at + 7, `packet is relative to frame ${base}, but no reference was given`);
  }
  const inputSize = (bytes[at + 5]! << 8) | bytes[at + 6]!;
  throw new DecodeError(
    'bad-length',
    at + 5,
    `inputSize ${inputSize} differs from the reference (${reference.length})`,
  );
}

/**
 * Decodes a whole input-stream packet into `out` (frame after frame, `inputSize` bytes each, from
 * index 0) and returns the bytes written (frameCount × inputSize). Before writing anything it
 * checks that size against `options.maxBytes` (default 64 KiB) and against `out.length`
 * (`too-large`). A packet with the REFERENCE flag needs `options.reference`, the input of frame
 * `startFrame − 1` (`bad-value` without it, `bad-length` if its size differs). Allocates nothing.
 *
 * The packet is `bytes[options.offset, options.offset + options.length)`, by default all of
 * `bytes`; a stream after a header of the caller's own decodes in place, without a copy, and
 * every `DecodeError` offset is an index into `bytes` (see {@link InputStreamRange}).
 * Throws only `DecodeError`, for any bytes and any offset or length (`bad-range` for one that is
 * not an integer 0..2^32−1); on a throw, `out` may hold partial data.
 */
export function decodeInputStream(bytes: Uint8Array, out: Uint8Array, options?: InputStreamDecodeOptions): number {
  const at = options?.offset ?? 0;
  const length = options?.length;
  const len = length === undefined ? bytes.length : at + length;
  // Every check in one branch per step; decodeFailure repeats them in order to name the problem.
  if (!(at >>> 0 === at && (length === undefined || length >>> 0 === length) && len <= bytes.length && len - at >= 8))
    decodeFailure(bytes, out, options);
  const frameCount = bytes[at + 4]!;
  const inputSize = (bytes[at + 5]! << 8) | bytes[at + 6]!;
  const flags = bytes[at + 7]!;
  const n = frameCount * inputSize;
  const given = options?.reference;
  if (
    frameCount === 0 ||
    inputSize === 0 ||
    (flags & ~INPUT_STREAM_FLAG_REFERENCE) !== 0 ||
    n > (options?.maxBytes ?? INPUT_STREAM_DEFAULT_MAX_BYTES) ||
    n > out.length ||
    (flags !== 0 && (given === undefined || given.length !== inputSize))
  )
    decodeFailure(bytes, out, options);
  if (options?.header !== undefined) fillHeader(bytes, at, options.header);
  return decodeRuns(bytes, at + INPUT_STREAM_HEADER_SIZE, len, out, n, inputSize, flags === 0 ? undefined : given);
}

/*
 * The decoder is three functions, each under V8's inlining limit (460 bytes of bytecode): at 907
 * bytes in one function it was never inlined into its caller. Errors are thrown by helpers.
 */

/**
 * Decodes the runs in `bytes[p, len)` into `out[0, n)` and returns n. One pass: output bytes are
 * written in order, each as its base (the byte one frame earlier, or the reference / zero in the
 * first frame) XOR the diff bits the runs put in it.
 */
function decodeRuns(
  bytes: Uint8Array,
  p: number,
  len: number,
  out: Uint8Array,
  n: number,
  inputSize: number,
  reference: Uint8Array | undefined,
): number {
  const total = n * 8;
  let pos = 0;
  let cursor = 0; // bytes [0, cursor) of out are final
  let pending = -1; // the byte collecting diff bits, or -1
  let acc = 0;
  for (;;) {
    // One canonical LEB128 varint of at most 4 bytes; the usual one-byte run read here.
    const start = p;
    const b = p < len ? bytes[p]! : 0x80;
    let run: number;
    if (b < 0x80) {
      run = b;
      p++;
    } else {
      run = readLongRun(bytes, p, len);
      p += varintLength(run);
    }
    pos += run;
    // The end of the stream flushes like a set bit in byte n would: one copyBase call site (V8
    // inlines it once, which keeps the decoder within its inlining budget).
    let byte = n;
    if (pos < total) byte = pos >>> 3;
    else {
      if (pos > total) throw runPastEnd(start, total);
      if (p !== len) throw new DecodeError('trailing-bytes', p, `${len - p} bytes after the last run`);
    }
    if (byte !== pending) {
      if (pending >= 0) {
        out[pending] = baseByte(out, pending, inputSize, reference) ^ acc;
        cursor = pending + 1;
      }
      copyBase(out, cursor, byte, inputSize, reference);
      if (byte === n) return n;
      cursor = byte;
      pending = byte;
      acc = 0;
    }
    acc |= 1 << (pos & 7);
    pos++;
  }
}

/**
 * A run at `start` that is not one byte below 128: reads and checks the canonical LEB128 varint
 * (at most 4 bytes, minimally encoded) and returns its value; it is `varintLength(value)` bytes
 * long. Throws `truncated` when the stream ends first (also for `start` at the end).
 */
function readLongRun(bytes: Uint8Array, start: number, len: number): number {
  let p = start;
  if (p >= len) throw new DecodeError('truncated', p, 'input stream ends inside its runs');
  let b = bytes[p++]!;
  let run = b & 0x7f;
  let shift = 7;
  while (b >= 0x80) {
    if (shift === 28) throw new DecodeError('bad-value', start, 'run longer than 4 bytes');
    if (p >= len) throw new DecodeError('truncated', p, 'input stream ends inside a run');
    b = bytes[p++]!;
    if (b === 0) throw new DecodeError('bad-value', p - 1, 'run is not minimally encoded');
    run |= (b & 0x7f) << shift;
    shift += 7;
  }
  return run;
}

function runPastEnd(start: number, total: number): DecodeError {
  return new DecodeError('bad-value', start, `run passes the end of the ${total}-bit stream`);
}
