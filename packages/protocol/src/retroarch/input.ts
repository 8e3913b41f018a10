/**
 * Hand-written DataView codecs of the per-frame messages INPUT, NOINPUT and CRC. They allocate
 * nothing when called repeatedly with the same buffer (one `DataView` per distinct buffer is cached,
 * separately for reading and writing). Their bytes are proven equal to the buffer-layout
 * declarations in `layouts.ts` by property tests.
 */
import { checkRange } from '../byte-range.js';
import { DecodeError, EncodeError } from '../errors.js';
import { RETROARCH_MAX_DEVICES, RetroArchCommand } from './commands.js';

// Plain constants: a cross-module enum member is a property load on every call.
const CMD_INPUT: number = RetroArchCommand.Input;
const CMD_NOINPUT: number = RetroArchCommand.NoInput;
const CMD_CRC: number = RetroArchCommand.Crc;

/** Most input words one client can send: 16 devices × 5 words (keyboard). */
export const RETROARCH_MAX_INPUT_WORDS = RETROARCH_MAX_DEVICES * 5;

/**
 * One cached DataView per direction, keyed by the buffer it views. A class with fields that never
 * hold `undefined` keeps one map and field type for the compiler (measured: an object literal
 * whose `bytes` starts as `undefined` is slower on the 1-word INPUT encode).
 */
class ViewCache {
  bytes: Uint8Array = new Uint8Array(0);
  view: DataView = new DataView(new ArrayBuffer(0));
}
const writeCache = new ViewCache();
const readCache = new ViewCache();

function viewForWrite(t: Uint8Array): DataView {
  if (t !== writeCache.bytes) {
    writeCache.bytes = t;
    writeCache.view = new DataView(t.buffer, t.byteOffset, t.byteLength);
  }
  return writeCache.view;
}

function viewForRead(b: Uint8Array): DataView {
  if (b !== readCache.bytes) {
    readCache.bytes = b;
    readCache.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  return readCache.view;
}

function notU32(v: number): boolean {
  return v >>> 0 !== v;
}

function tooSmall(size: number, offset: number, target: Uint8Array): EncodeError {
  return new EncodeError('buffer-too-small', `a ${size}-byte frame at ${offset} does not fit ${target.length} bytes`);
}

/** Size of an INPUT frame (prefix included) carrying `words` input words. */
export function retroArchInputSize(words: number): number {
  return 16 + 4 * words;
}

/**
 * Writes a whole INPUT frame: `[0x03][8+4n][frame][client][n input words]`.
 * @param client the client number word (RetroArch reads its low 16 bits; the host ignores it).
 * @param input input words per device (joypad 1, mouse/lightgun 2, analog 3, keyboard 5).
 * @param count how many words of `input` to send (default all).
 * @returns bytes written.
 * @throws EncodeError `out-of-range` (a value is not a u32, `count` or `offset` is not an integer
 *   in range) or `buffer-too-small`; it names the first problem in that order: count, room (and
 *   offset), frame / client, then the first bad input word. For an input word out of range in a
 *   frame of several words, the frame may already be partly written; otherwise nothing is written.
 */
export function encodeRetroArchInput(
  target: Uint8Array,
  offset: number,
  frame: number,
  client: number,
  input: ArrayLike<number>,
  count: number = input.length,
): number {
  // Integer checks only, as bit operations. The room is checked by the DataView itself (its
  // RangeError becomes the EncodeError below): an explicit `offset + size <= target.length` in
  // front of it doubled the bounds checks and cost the 1-word encode about 20 %. One exit for every
  // failure and for a new buffer, after the stores (four `throw` call sites made the same checks
  // about twice as slow; 395 bytes of bytecode, under V8's 460-byte inlining limit). See the
  // README's benchmark section.
  const size = 16 + 4 * count;
  // A buffer other than the last one (no cached view yet) also leaves by the one exit.
  let ok =
    target === writeCache.bytes &&
    offset >>> 0 === offset &&
    count >>> 0 === count &&
    frame >>> 0 === frame &&
    client >>> 0 === client;
  let cause: unknown;
  if (ok) {
    const v = writeCache.view;
    try {
      if (count === 1) {
        // One joypad word, the common case: checked, then stored first, at the frame's last 4
        // bytes, so a frame that does not fit fails on the first store, before anything is written.
        const w = input[0]!;
        ok = w >>> 0 === w;
        if (ok) v.setUint32(offset + 16, w);
      } else {
        ok = offset + size <= target.length && count <= input.length;
        if (ok) {
          for (let i = 0, p = offset + 16; i < count; i++, p += 4) {
            const w = input[i]!;
            ok &&= w >>> 0 === w;
            v.setUint32(p, w);
          }
        }
      }
      if (ok) {
        v.setUint32(offset, CMD_INPUT);
        v.setUint32(offset + 4, size - 8);
        v.setUint32(offset + 8, frame);
        v.setUint32(offset + 12, client);
      }
    } catch (e) {
      // The DataView's RangeError (no room), or a throwing element getter of an exotic `input`.
      ok = false;
      cause = e;
    }
  }
  if (!ok) return encodeInputSlow(target, offset, frame, client, input, count, cause);
  return size;
}

/**
 * {@link encodeRetroArchInput} off its fast path: a new target buffer (its view is made and
 * cached, then the fast path runs again), or arguments it refused (the error names them).
 */
function encodeInputSlow(
  target: Uint8Array,
  offset: number,
  frame: number,
  client: number,
  input: ArrayLike<number>,
  count: number,
  cause: unknown,
): number {
  if (target !== writeCache.bytes) {
    viewForWrite(target);
    return encodeRetroArchInput(target, offset, frame, client, input, count);
  }
  throw inputFailure(target, offset, frame, client, input, count, cause);
}

/**
 * The error {@link encodeRetroArchInput} throws for arguments it refused (off the hot path), in
 * the documented order; `cause` (rethrown when no argument is wrong) is what interrupted it.
 */
function inputFailure(
  target: Uint8Array,
  offset: number,
  frame: number,
  client: number,
  input: ArrayLike<number>,
  count: number,
  cause?: unknown,
): EncodeError {
  if (!(count >>> 0 === count && count <= input.length))
    return new EncodeError('out-of-range', `count ${count} of ${input.length}`);
  const size = 16 + 4 * count;
  if (!(offset >= 0 && offset + size <= target.length)) return tooSmall(size, offset, target);
  if (offset >>> 0 !== offset) return new EncodeError('out-of-range', `offset ${offset} is not an integer`);
  if (notU32(frame) || notU32(client)) return new EncodeError('out-of-range', `frame ${frame} / client ${client}`);
  for (let i = 0; i < count; i++) {
    const w = input[i]!;
    if (notU32(w)) return new EncodeError('out-of-range', `input word ${i} = ${w} is not a u32`);
  }
  if (cause !== undefined) throw cause;
  return new EncodeError('out-of-range', 'bad INPUT arguments');
}

/** A reusable INPUT frame for the hot path: decode into it without allocating. */
export class RetroArchInputFrame {
  /** The frame number. */
  frame = 0;
  /** The client number word as sent. */
  client = 0;
  /** Number of valid words in {@link words}. */
  count = 0;
  /** Input words; only the first {@link count} are meaningful. */
  readonly words: Uint32Array;

  constructor(capacity: number = RETROARCH_MAX_INPUT_WORDS) {
    this.words = new Uint32Array(capacity);
  }
}

/**
 * Decodes an INPUT payload at `bytes[offset..offset+length)` into `into`, allocating nothing.
 * @throws DecodeError `truncated` (the range passes the end of `bytes`), `bad-range` (an offset or
 *   length that is not an integer 0..2^32−1), `bad-length` (shorter than 8 bytes or not whole
 *   words) or `too-large` (more words than `into` holds).
 */
export function decodeRetroArchInputInto(
  into: RetroArchInputFrame,
  bytes: Uint8Array,
  offset: number,
  length: number,
): RetroArchInputFrame {
  checkRange(bytes, offset, length, 'INPUT payload');
  if (length < 8 || (length & 3) !== 0) {
    throw new DecodeError('bad-length', offset, `INPUT payload of ${length} bytes is not 8 + 4n`);
  }
  const count = (length - 8) >>> 2;
  if (count > into.words.length) {
    throw new DecodeError('too-large', offset, `INPUT has ${count} words, more than ${into.words.length}`);
  }
  const v = viewForRead(bytes);
  into.frame = v.getUint32(offset);
  into.client = v.getUint32(offset + 4);
  into.count = count;
  const words = into.words;
  for (let i = 0; i < count; i++) words[i] = v.getUint32(offset + 8 + 4 * i);
  return into;
}

/** Size of a NOINPUT frame. */
export const RETROARCH_NOINPUT_SIZE = 12;

/**
 * Writes a whole NOINPUT frame: `[0x04][4][frame]`.
 * @returns 12.
 */
export function encodeRetroArchNoInput(target: Uint8Array, offset: number, frame: number): number {
  if (offset < 0 || offset + 12 > target.length) throw tooSmall(12, offset, target);
  if (notU32(frame)) throw new EncodeError('out-of-range', `frame ${frame} is not a u32`);
  const v = viewForWrite(target);
  v.setUint32(offset, CMD_NOINPUT);
  v.setUint32(offset + 4, 4);
  v.setUint32(offset + 8, frame);
  return 12;
}

/**
 * Decodes a NOINPUT payload (4 bytes).
 * @returns the frame number.
 */
export function decodeRetroArchNoInput(bytes: Uint8Array, offset: number, length: number): number {
  checkRange(bytes, offset, length, 'NOINPUT payload');
  if (length !== 4) throw new DecodeError('bad-length', offset, `NOINPUT payload is ${length} bytes, not 4`);
  return viewForRead(bytes).getUint32(offset);
}

/** Size of a CRC frame. */
export const RETROARCH_CRC_SIZE = 16;

/**
 * Writes a whole CRC frame: `[0x40][8][frame][crc]`.
 * @returns 16.
 */
export function encodeRetroArchCrc(target: Uint8Array, offset: number, frame: number, crc: number): number {
  if (offset < 0 || offset + 16 > target.length) throw tooSmall(16, offset, target);
  if (notU32(frame) || notU32(crc)) throw new EncodeError('out-of-range', `frame ${frame} / crc ${crc}`);
  const v = viewForWrite(target);
  v.setUint32(offset, CMD_CRC);
  v.setUint32(offset + 4, 8);
  v.setUint32(offset + 8, frame);
  v.setUint32(offset + 12, crc);
  return 16;
}

/** A reusable CRC message for {@link decodeRetroArchCrcInto}. */
export interface RetroArchCrcValue {
  /** Payload offset 0, u32: the frame whose serialized state was hashed. */
  frame: number;
  /** Payload offset 4, u32: CRC-32 of the core's serialized state at `frame`. */
  crc: number;
}

/** Decodes a CRC payload (8 bytes) into `into`, allocating nothing. */
export function decodeRetroArchCrcInto<T extends RetroArchCrcValue>(
  into: T,
  bytes: Uint8Array,
  offset: number,
  length: number,
): T {
  checkRange(bytes, offset, length, 'CRC payload');
  if (length !== 8) throw new DecodeError('bad-length', offset, `CRC payload is ${length} bytes, not 8`);
  const v = viewForRead(bytes);
  into.frame = v.getUint32(offset);
  into.crc = v.getUint32(offset + 4);
  return into;
}
