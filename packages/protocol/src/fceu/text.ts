import { checkOffset } from '../byte-range.js';
import { DecodeError, EncodeError } from '../errors.js';
import { isFceuCommand } from './command.js';
import { frameCommandAt, putFrameData } from './frame-data.js';
import { readU32LE, writeU32LE } from './le.js';
import {
  decodeFceuFrameData,
  FCEU_TCP_FRAME_SIZE,
  FCEU_TCP_HEADER_SIZE,
  FCEU_TEXT_COUNTER,
  type FceuFrameData,
} from './packet.js';

/*
 * Text messages (TCP only).
 *   server→client: [u32 0xFFFFFFFF][u32 length][length bytes of text][0x00]   (little-endian)
 *   client→server: [text bytes][0x00]
 * At most 256 bytes including the NUL (so at most 255 characters). One byte per character:
 * texts are read and written as Latin-1 so every byte string round-trips.
 */

/** The most bytes a text message may take, including its terminating NUL. */
export const FCEU_TEXT_MAX_BYTES = 256;
/** Header of a server→client text message: the 0xFFFFFFFF counter and the length. */
export const FCEU_TEXT_HEADER_SIZE = 8;

const latin1 = new TextDecoder('latin1');

/** Options for the text decoders. */
export interface FceuTextOptions {
  /**
   * The most bytes a text may take including its NUL (default 256, the seed's limit). FCE Ultra
   * 0.91's own server prefixes relayed texts with `<Player N> `, so raise this to accept those.
   */
  maxBytes?: number;
}

/** One message read from the server→client TCP stream. */
export type FceuServerTcpMessage =
  | {
      /** A 9-byte frame packet: a counter other than 0xFFFFFFFF, then the frame data. */
      readonly kind: 'frame';
      /** u32 LE at offset 0: the packet counter, linear from 0. */
      readonly counter: number;
      /** The 4 controller bytes and the command byte at offsets 4–8. */
      readonly frame: FceuFrameData;
    }
  | {
      /** A text message: the counter 0xFFFFFFFF, a u32 LE length, the text and its NUL. */
      readonly kind: 'text';
      /** The text as sent, one Latin-1 character per byte, NUL excluded (see {@link fceuDisplayText} to show it). */
      readonly text: string;
    };

/** A message read from a stream, with the number of bytes it took. */
export interface FceuRead<T> {
  /** The message: a frame or a text from the server's stream, a text (without its NUL) from a client's. */
  readonly message: T;
  /** The bytes it took in the stream, NUL and header included: the next message starts at `offset + size`. */
  readonly size: number;
}

/**
 * What a text looks like on screen: FCE Ultra shows every character below 32 as a space.
 * Decoders return the text as sent so it re-encodes byte for byte; call this to display it.
 */
export function fceuDisplayText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    out += c < 32 ? ' ' : text[i];
  }
  return out;
}

function writeText(text: string, target: Uint8Array, at: number): void {
  for (let i = 0; i < text.length; i++) target[at + i] = text.charCodeAt(i);
  target[at + text.length] = 0;
}

function checkText(text: string): void {
  if (text.length + 1 > FCEU_TEXT_MAX_BYTES) {
    throw new EncodeError('too-long', `text of ${text.length} characters exceeds ${FCEU_TEXT_MAX_BYTES - 1}`);
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0 || c > 0xff)
      throw new EncodeError('out-of-range', `character ${c} at ${i} is not a non-NUL Latin-1 byte`);
  }
}

function room(target: Uint8Array, offset: number, n: number): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + n > target.length) {
    throw new EncodeError('buffer-too-small', `FCEU text needs ${n} bytes at offset ${offset} of ${target.length}`);
  }
}

/** Size on the wire of a server→client text message carrying `text`. */
export function fceuServerTextSize(text: string): number {
  return FCEU_TEXT_HEADER_SIZE + text.length + 1;
}

/**
 * Writes a server→client text message (counter 0xFFFFFFFF, length, text, NUL). The text must be
 * Latin-1 without NUL and at most 255 characters. Returns the bytes written.
 */
export function encodeFceuServerText(text: string, target: Uint8Array, offset = 0): number {
  checkText(text);
  const n = fceuServerTextSize(text);
  room(target, offset, n);
  writeU32LE(target, offset, FCEU_TEXT_COUNTER);
  writeU32LE(target, offset + 4, text.length);
  writeText(text, target, offset + FCEU_TEXT_HEADER_SIZE);
  return n;
}

/** Writes a client→server text message (text and NUL); returns the bytes written. */
export function encodeFceuClientText(text: string, target: Uint8Array, offset = 0): number {
  checkText(text);
  room(target, offset, text.length + 1);
  writeText(text, target, offset);
  return text.length + 1;
}

function maxBytesOf(options: FceuTextOptions | undefined): number {
  const m = options?.maxBytes ?? FCEU_TEXT_MAX_BYTES;
  if (!Number.isInteger(m) || m < 1) throw new RangeError(`maxBytes ${m} must be a positive integer`);
  return m;
}

/**
 * Reads one message of the server→client TCP stream at `offset`: a frame packet (9 bytes) or,
 * when the counter is 0xFFFFFFFF, a text message. Returns `undefined` when the bytes end before
 * the message does (feed more and call again). The announced text length is checked against
 * `maxBytes` before waiting for it (`too-large`). An offset that is not an integer 0..2^32−1 is
 * `DecodeError('bad-range')`.
 */
export function readFceuServerTcpMessage(
  bytes: Uint8Array,
  offset = 0,
  options?: FceuTextOptions,
): FceuRead<FceuServerTcpMessage> | undefined {
  const maxBytes = maxBytesOf(options);
  checkOffset(offset, 'FCEU TCP stream');
  if (bytes.length - offset < FCEU_TCP_HEADER_SIZE) return undefined;
  const counter = readU32LE(bytes, offset);
  if (counter !== FCEU_TEXT_COUNTER) {
    if (bytes.length - offset < FCEU_TCP_FRAME_SIZE) return undefined;
    const frame = decodeFceuFrameData(bytes, offset + FCEU_TCP_HEADER_SIZE);
    return { message: { kind: 'frame', counter, frame }, size: FCEU_TCP_FRAME_SIZE };
  }
  if (bytes.length - offset < FCEU_TEXT_HEADER_SIZE) return undefined;
  const length = readU32LE(bytes, offset + 4);
  if (length + 1 > maxBytes) {
    throw new DecodeError('too-large', offset + 4, `text of ${length} bytes exceeds ${maxBytes - 1}`);
  }
  const size = FCEU_TEXT_HEADER_SIZE + length + 1;
  if (bytes.length - offset < size) return undefined;
  const start = offset + FCEU_TEXT_HEADER_SIZE;
  const body = bytes.subarray(start, start + length);
  const nul = body.indexOf(0);
  if (nul >= 0) throw new DecodeError('bad-value', start + nul, 'NUL inside the announced text length');
  if (bytes[start + length] !== 0) throw new DecodeError('bad-value', start + length, 'text is not NUL-terminated');
  return { message: { kind: 'text', text: latin1.decode(body) }, size };
}

/**
 * A reusable server→client TCP message for {@link readFceuServerTcpMessageInto}: a frame
 * (`kind: 'frame'`, with `counter` and `frame`) or a text (`kind: 'text'`, with `text`).
 * See {@link createFceuServerTcpMessage}.
 */
export interface FceuServerTcpMessageValue {
  /** Which message was read last. */
  kind: 'frame' | 'text';
  /** A frame's counter; 0xFFFFFFFF after a text. */
  counter: number;
  /** A frame's data (its `controllers` must hold 4 bytes); left as it was by a text. */
  frame: FceuFrameData;
  /** A text message; `''` after a frame. */
  text: string;
}

/** A fresh {@link FceuServerTcpMessageValue} to reuse with {@link readFceuServerTcpMessageInto}. */
export function createFceuServerTcpMessage(): FceuServerTcpMessageValue {
  return { kind: 'frame', counter: 0, frame: { controllers: new Uint8Array(4), command: 0 }, text: '' };
}

/**
 * `FCEU_TCP_FRAME_SIZE` as a literal of this module for the fast path: an imported constant is
 * read at run time even in optimized code (the same finding as the UDP decode in decode-into.ts).
 */
const TCP_FRAME_SIZE = 9;

/**
 * {@link readFceuServerTcpMessage} into `into`: reads one message of the server→client TCP stream
 * at `offset` and returns the bytes it took, or 0 when the bytes end before the message does
 * (feed more and call again; `into` is then unchanged, as it is on a throw). A frame is read
 * without allocating; a text allocates its string (texts are rare, frames come every frame).
 * Throws the same `DecodeError`s (code and offset) as {@link readFceuServerTcpMessage}, and
 * `RangeError` for a bad `maxBytes`.
 */
export function readFceuServerTcpMessageInto<T extends FceuServerTcpMessageValue>(
  into: T,
  bytes: Uint8Array,
  offset = 0,
  options?: FceuTextOptions,
): number {
  // Fast path: a whole frame packet at a valid offset, every check in one branch.
  if (offset >>> 0 === offset && offset + TCP_FRAME_SIZE <= bytes.length) {
    // The counter as an int32 (the text counter 0xFFFFFFFF is -1): no float compare. Spelled out
    // rather than readI32LE: the call measured slower here (0.66-0.67 against 0.70-0.72 paired).
    const word = bytes[offset]! | (bytes[offset + 1]! << 8) | (bytes[offset + 2]! << 16) | (bytes[offset + 3]! << 24);
    const command = bytes[offset + 8]!;
    const frame = into.frame;
    const c = frame.controllers;
    if (word !== -1 && isFceuCommand(command) && c.length >= 4) {
      if (options !== undefined) maxBytesOf(options); // a bad option is refused whatever the bytes
      c[0] = bytes[offset + 4]!;
      c[1] = bytes[offset + 5]!;
      c[2] = bytes[offset + 6]!;
      c[3] = bytes[offset + 7]!;
      frame.command = command;
      into.kind = 'frame';
      into.counter = word >>> 0;
      into.text = '';
      return TCP_FRAME_SIZE;
    }
  }
  // The end of the bytes read so far, which every read loop meets once per chunk: nothing to take.
  if (offset === bytes.length && options === undefined) return 0;
  return readServerTcpMessageChecked(into, bytes, offset, options);
}

/** {@link readFceuServerTcpMessageInto} with every check spelled out: texts, partial data, refusals. */
function readServerTcpMessageChecked<T extends FceuServerTcpMessageValue>(
  into: T,
  bytes: Uint8Array,
  offset: number,
  options: FceuTextOptions | undefined,
): number {
  const maxBytes = maxBytesOf(options);
  checkOffset(offset, 'FCEU TCP stream');
  const have = bytes.length - offset;
  if (have < FCEU_TCP_HEADER_SIZE) return 0;
  const counter = readU32LE(bytes, offset);
  if (counter !== FCEU_TEXT_COUNTER) {
    if (have < FCEU_TCP_FRAME_SIZE) return 0;
    const d = offset + FCEU_TCP_HEADER_SIZE;
    putFrameData(into.frame, bytes, d, frameCommandAt(bytes, d));
    into.kind = 'frame';
    into.counter = counter;
    into.text = '';
    return FCEU_TCP_FRAME_SIZE;
  }
  if (have < FCEU_TEXT_HEADER_SIZE) return 0;
  const length = readU32LE(bytes, offset + 4);
  if (length + 1 > maxBytes) {
    throw new DecodeError('too-large', offset + 4, `text of ${length} bytes exceeds ${maxBytes - 1}`);
  }
  const size = FCEU_TEXT_HEADER_SIZE + length + 1;
  if (have < size) return 0;
  const start = offset + FCEU_TEXT_HEADER_SIZE;
  const body = bytes.subarray(start, start + length);
  const nul = body.indexOf(0);
  if (nul >= 0) throw new DecodeError('bad-value', start + nul, 'NUL inside the announced text length');
  if (bytes[start + length] !== 0) throw new DecodeError('bad-value', start + length, 'text is not NUL-terminated');
  into.kind = 'text';
  into.counter = FCEU_TEXT_COUNTER;
  into.text = latin1.decode(body);
  return size;
}

/** Decodes exactly one server→client TCP message (frame or text); `truncated` if incomplete. */
export function decodeFceuServerTcpMessage(bytes: Uint8Array, options?: FceuTextOptions): FceuServerTcpMessage {
  const read = readFceuServerTcpMessage(bytes, 0, options);
  if (read === undefined) throw new DecodeError('truncated', bytes.length, 'FCEU TCP message is incomplete');
  if (read.size !== bytes.length) {
    throw new DecodeError('trailing-bytes', read.size, `${bytes.length - read.size} bytes after the FCEU TCP message`);
  }
  return read.message;
}

/**
 * Reads one client→server text (bytes up to and including a NUL) at `offset`. Returns
 * `undefined` while no NUL has arrived; throws `too-large` once `maxBytes` bytes came without one,
 * `bad-range` for an offset that is not an integer 0..2^32−1.
 */
export function readFceuClientText(
  bytes: Uint8Array,
  offset = 0,
  options?: FceuTextOptions,
): FceuRead<string> | undefined {
  const maxBytes = maxBytesOf(options);
  checkOffset(offset, 'FCEU client text');
  const window = bytes.subarray(offset, offset + maxBytes);
  const nul = window.indexOf(0);
  if (nul < 0) {
    if (window.length >= maxBytes) {
      throw new DecodeError('too-large', offset, `no NUL within ${maxBytes} bytes of client text`);
    }
    return undefined;
  }
  return { message: latin1.decode(window.subarray(0, nul)), size: nul + 1 };
}

/** Decodes exactly one client→server text (text and NUL). */
export function decodeFceuClientText(bytes: Uint8Array, options?: FceuTextOptions): string {
  const read = readFceuClientText(bytes, 0, options);
  if (read === undefined) throw new DecodeError('truncated', bytes.length, 'FCEU client text has no NUL');
  if (read.size !== bytes.length) {
    throw new DecodeError('trailing-bytes', read.size, `${bytes.length - read.size} bytes after the NUL`);
  }
  return read.message;
}
