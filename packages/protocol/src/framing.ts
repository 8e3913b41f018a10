import { checkU32 } from './byte-writer.js';
import { DecodeError, EncodeError } from './errors.js';

/**
 * RetroArch-style framing: every message is `[u32 command][u32 payload length][payload]`, both
 * integers big-endian. This module writes frames into caller buffers and reassembles them from a
 * byte stream delivered in arbitrary chunks (as TCP delivers it).
 */

/** Size of the `[command][length]` prefix in bytes. */
export const FRAME_HEADER_SIZE = 8;

/** Default largest payload the {@link FrameDecoder} accepts: 64 MiB, enough for a savestate. */
export const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;

/** Pending-buffer capacity kept between frames; a larger buffer is dropped once it is drained. */
const RETAINED_CAPACITY = 1024 * 1024;

/** Smallest pending buffer allocated. */
const MIN_CAPACITY = 256;

/** One decoded frame. */
export interface Frame {
  /** The command id (u32). */
  readonly command: number;
  /**
   * The payload. A view unless the decoder was built with `copy: true`; see {@link FrameDecoder}
   * for how long a view stays valid.
   */
  readonly payload: Uint8Array;
}

/** Total size of a frame carrying `payloadLength` bytes. */
export function frameSize(payloadLength: number): number {
  return FRAME_HEADER_SIZE + payloadLength;
}

/**
 * Writes the 8-byte `[command][length]` prefix at `offset`.
 * @returns the offset just past the prefix (where the payload goes).
 * @throws EncodeError `out-of-range` for a command or length that is not a u32,
 *   `buffer-too-small` when `target` cannot hold the prefix.
 */
export function writeFrameHeader(target: Uint8Array, offset: number, command: number, payloadLength: number): number {
  checkU32(command, 'command');
  checkU32(payloadLength, 'payload length');
  if (offset < 0 || offset + FRAME_HEADER_SIZE > target.length) {
    throw new EncodeError('buffer-too-small', `a frame header at ${offset} does not fit ${target.length} bytes`);
  }
  target[offset] = command >>> 24;
  target[offset + 1] = command >>> 16;
  target[offset + 2] = command >>> 8;
  target[offset + 3] = command;
  target[offset + 4] = payloadLength >>> 24;
  target[offset + 5] = payloadLength >>> 16;
  target[offset + 6] = payloadLength >>> 8;
  target[offset + 7] = payloadLength;
  return offset + FRAME_HEADER_SIZE;
}

/**
 * Writes a whole frame (prefix and a copy of `payload`) into `target` at `offset`. Allocates nothing.
 * @returns the number of bytes written, `8 + payload.length`.
 * @throws EncodeError `buffer-too-small` when the frame does not fit, `out-of-range` for a bad command.
 */
export function encodeFrame(target: Uint8Array, offset: number, command: number, payload: Uint8Array): number {
  const size = frameSize(payload.length);
  if (offset < 0 || offset + size > target.length) {
    throw new EncodeError('buffer-too-small', `a ${size}-byte frame at ${offset} does not fit ${target.length} bytes`);
  }
  writeFrameHeader(target, offset, command, payload.length);
  target.set(payload, offset + FRAME_HEADER_SIZE);
  return size;
}

/** Options of a {@link FrameDecoder}. */
export interface FrameDecoderOptions {
  /** Largest accepted payload in bytes (default {@link DEFAULT_MAX_PAYLOAD}). */
  maxPayload?: number;
  /** When true, {@link FrameDecoder.next} returns payloads as fresh copies instead of views. */
  copy?: boolean;
}

function readU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/**
 * A streaming frame decoder. Feed it chunks with {@link push} as they arrive, then pull whole frames
 * with {@link next} (one object per frame) or {@link readFrame} (no allocation: the frame is
 * described by {@link command}, {@link bytes}, {@link payloadOffset} and {@link payloadLength}).
 *
 * Allocation: a frame that lies entirely inside one pushed chunk is never copied; its payload is a
 * view into that chunk. Only the bytes of a frame that straddles chunks are copied, once, into an
 * internal pending buffer. That buffer grows with the bytes actually received (at most doubling),
 * never with what a length field merely announces, and a frame announcing more than `maxPayload`
 * fails with `DecodeError('too-large')` as soon as its 8-byte prefix is seen, before any payload
 * space is reserved.
 *
 * Views: a payload view (the default) stays valid until the next call of {@link push},
 * {@link next}, {@link readFrame} or {@link readRaw}, and only as long as the caller does not
 * modify the chunk it pushed. Use `copy: true` (or `payload.slice()`) to keep payloads longer.
 *
 * After a `DecodeError` the stream cannot be resynchronised: every later call throws the same error.
 */
export class FrameDecoder {
  /** Largest accepted payload. */
  readonly maxPayload: number;
  private readonly copy: boolean;

  private pending: Uint8Array = new Uint8Array(0);
  private pStart = 0;
  private pEnd = 0;
  private chunk: Uint8Array = new Uint8Array(0);
  private cPos = 0;
  private front: Uint8Array = this.chunk;
  private frontOffset = 0;
  private failure: DecodeError | undefined;
  private consumed = 0;

  /** Command of the frame last returned by {@link readFrame}. */
  command = 0;
  /** Buffer holding the payload of the frame last returned by {@link readFrame}. */
  bytes: Uint8Array = this.chunk;
  /** Offset of that payload in {@link bytes}. */
  payloadOffset = 0;
  /** Length of that payload. */
  payloadLength = 0;

  constructor(options: FrameDecoderOptions = {}) {
    const max = options.maxPayload ?? DEFAULT_MAX_PAYLOAD;
    if (!Number.isInteger(max) || max < 0 || max > 0xffffffff) {
      throw new RangeError(`maxPayload ${max} must be an integer in [0, 2^32)`);
    }
    this.maxPayload = max;
    this.copy = options.copy ?? false;
  }

  /** Bytes pushed but not yet returned as frames. */
  get buffered(): number {
    return this.pEnd - this.pStart + (this.chunk.length - this.cPos);
  }

  /** Capacity of the internal pending buffer (for diagnostics and tests). */
  get reservedBytes(): number {
    return this.pending.length;
  }

  /** Stream offset of the next unread byte (bytes consumed so far). */
  get streamOffset(): number {
    return this.consumed;
  }

  /**
   * Hands the decoder the next chunk of the stream. The chunk is not copied unless a frame
   * straddles its end; bytes of an earlier chunk that were not read yet are copied first. Once
   * {@link readFrame} / {@link next} has reported that no whole frame is left, the decoder holds no
   * reference to the chunk, so a caller may refill the same receive buffer for the next push
   * (payload views into it die with the refill, of course).
   */
  push(chunk: Uint8Array): void {
    if (this.failure) throw this.failure;
    const rest = this.chunk.length - this.cPos;
    if (rest > 0) {
      this.reserve(this.pEnd - this.pStart + rest);
      this.pending.set(this.chunk.subarray(this.cPos), this.pEnd);
      this.pEnd += rest;
    }
    this.chunk = chunk;
    this.cPos = 0;
  }

  /**
   * Reads the next whole frame without allocating. On `true` the frame is described by
   * {@link command}, {@link bytes}, {@link payloadOffset} and {@link payloadLength}.
   * @returns false when more bytes are needed.
   * @throws DecodeError `too-large` when a frame announces more than {@link maxPayload}.
   */
  readFrame(): boolean {
    if (this.failure) throw this.failure;
    if (!this.ensure(FRAME_HEADER_SIZE)) return false;
    const length = readU32(this.front, this.frontOffset + 4);
    if (length > this.maxPayload) {
      this.failure = new DecodeError(
        'too-large',
        this.consumed + 4,
        `frame announces a ${length}-byte payload, more than the maximum ${this.maxPayload}`,
      );
      throw this.failure;
    }
    const size = FRAME_HEADER_SIZE + length;
    if (!this.ensure(size)) return false;
    this.command = readU32(this.front, this.frontOffset);
    this.bytes = this.front;
    this.payloadOffset = this.frontOffset + FRAME_HEADER_SIZE;
    this.payloadLength = length;
    this.consume(size);
    return true;
  }

  /**
   * The next whole frame, or `undefined` when more bytes are needed.
   * @throws DecodeError `too-large` when a frame announces more than {@link maxPayload}.
   */
  next(): Frame | undefined {
    if (!this.readFrame()) return undefined;
    const end = this.payloadOffset + this.payloadLength;
    const payload = this.copy
      ? this.bytes.slice(this.payloadOffset, end)
      : this.bytes.subarray(this.payloadOffset, end);
    return { command: this.command, payload };
  }

  /**
   * Pushes `chunk` and returns every frame now complete. Unlike {@link next}, the returned payloads
   * stay valid after later calls: a payload inside `chunk` is a view into it (valid while the caller
   * leaves `chunk` unchanged), and a payload reassembled from several chunks is a fresh copy.
   */
  feed(chunk: Uint8Array): Frame[] {
    this.push(chunk);
    const out: Frame[] = [];
    while (this.readFrame()) {
      const end = this.payloadOffset + this.payloadLength;
      const payload =
        this.copy || this.bytes !== this.chunk
          ? this.bytes.slice(this.payloadOffset, end)
          : this.bytes.subarray(this.payloadOffset, end);
      out.push({ command: this.command, payload });
    }
    return out;
  }

  /**
   * Reads `n` raw bytes that are not framed (e.g. RetroArch's 24-byte connection header, which
   * precedes the first frame). Returns a view valid under the same rules as payloads, or
   * `undefined` when fewer than `n` bytes are buffered.
   */
  readRaw(n: number): Uint8Array | undefined {
    if (this.failure) throw this.failure;
    if (!Number.isInteger(n) || n < 0 || n > FRAME_HEADER_SIZE + this.maxPayload) {
      throw new RangeError(`readRaw(${n}): n must be an integer in [0, ${FRAME_HEADER_SIZE + this.maxPayload}]`);
    }
    if (!this.ensure(n)) return undefined;
    const view = this.front.subarray(this.frontOffset, this.frontOffset + n);
    this.consume(n);
    return this.copy ? view.slice() : view;
  }

  /**
   * Makes `n` contiguous bytes available at `front[frontOffset]`. Reads straight from the current
   * chunk when nothing is pending; otherwise moves just enough bytes from the chunk into the
   * pending buffer. Returns false (having stashed what there is) when fewer than `n` bytes exist.
   */
  private ensure(n: number): boolean {
    const have = this.pEnd - this.pStart;
    const avail = this.chunk.length - this.cPos;
    if (have === 0) {
      if (avail >= n) {
        this.front = this.chunk;
        this.frontOffset = this.cPos;
        return true;
      }
      if (avail > 0) this.moveFromChunk(avail);
      return false;
    }
    if (have < n) {
      const take = Math.min(n - have, avail);
      if (take > 0) this.moveFromChunk(take);
      if (this.pEnd - this.pStart < n) return false;
    }
    this.front = this.pending;
    this.frontOffset = this.pStart;
    return true;
  }

  private moveFromChunk(count: number): void {
    this.reserve(this.pEnd - this.pStart + count);
    this.pending.set(this.chunk.subarray(this.cPos, this.cPos + count), this.pEnd);
    this.pEnd += count;
    this.cPos += count;
  }

  /** Makes room for `total` bytes from `pStart`, compacting or growing. */
  private reserve(total: number): void {
    if (this.pStart + total <= this.pending.length) return;
    const have = this.pEnd - this.pStart;
    if (total <= this.pending.length) {
      this.pending.copyWithin(0, this.pStart, this.pEnd);
    } else {
      // Double (amortised copying) but never past one maximal frame, unless `total` itself is larger
      // (only when push() stashes an unread remainder of the caller's own chunk).
      const doubled = Math.max(MIN_CAPACITY, this.pending.length * 2);
      const grown = new Uint8Array(Math.max(total, Math.min(doubled, FRAME_HEADER_SIZE + this.maxPayload)));
      grown.set(this.pending.subarray(this.pStart, this.pEnd));
      this.pending = grown;
    }
    this.pStart = 0;
    this.pEnd = have;
  }

  private consume(n: number): void {
    this.consumed += n;
    if (this.front === this.pending && this.pEnd > this.pStart) {
      this.pStart += n;
      if (this.pStart === this.pEnd) {
        this.pStart = 0;
        this.pEnd = 0;
        // Drop an oversized buffer (the frame just returned keeps it alive while it is used).
        if (this.pending.length > RETAINED_CAPACITY) this.pending = new Uint8Array(0);
      }
    } else {
      this.cPos += n;
    }
  }
}
