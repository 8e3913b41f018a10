import { checkRange } from '../byte-range.js';
import { crc32, crc32Update } from '../crc32.js';
import { DecodeError } from '../errors.js';
import { isFceuCommand } from './command.js';
import { frameCommandAt, putFrameData } from './frame-data.js';
import { readI32LE, readU32LE } from './le.js';
import {
  FCEU_FRAME_DATA_SIZE,
  FCEU_INPUT_DATA_SIZE,
  FCEU_TCP_FRAME_SIZE,
  FCEU_TCP_HEADER_SIZE,
  FCEU_TEXT_COUNTER,
  FCEU_UDP_HEADER_SIZE,
  type FceuFrameData,
  type FceuTcpFrame,
  type FceuUdpFrame,
  type FceuUdpInput,
} from './packet.js';

/*
 * Decode-into variants of the FCE Ultra messages sent every frame: the server's UDP and TCP frame
 * packets and a client's UDP input packet. Each reads `bytes[offset, offset + length)` (default:
 * all of `bytes`) into a caller-owned object and allocates nothing. Each checks what its
 * allocating sibling checks, in the same order, and throws the same DecodeError (code, and an
 * offset that is an index into the whole of `bytes`); on a throw the object is left unchanged.
 */

/*
 * What keeps the UDP fast paths at the speed of a hand-written loop (bench/fceu.bench.ts):
 * - Sizes as constants of this module. An imported binding is read from its module at every use,
 *   even in optimized code, so `offset + FCEU_UDP_HEADER_SIZE` and the CRC's end were run-time
 *   values; a `const` of this module is folded in.
 * - The CRC compared as int32s (`| 0` against readI32LE): no uint32-to-float conversions.
 * - Size. V8 inlines a function that already has optimized code of its own only when 1.2 × (its
 *   bytecode + what it inlines) fits the caller's 920-byte budget. decodeFceuUdpInputInto is 226
 *   bytes and inlines crc32Update (337) and three 4-byte reads: 722 × 1.2 = 866. Through the
 *   47-byte `crc32` wrapper it was 767 × 1.2 = 920.4, one byte over, and was called instead of
 *   inlined (0.47× the raw loop instead of 0.72×).
 */
const UDP_HEADER = FCEU_UDP_HEADER_SIZE;
const UDP_FRAME_SIZE = FCEU_UDP_HEADER_SIZE + FCEU_FRAME_DATA_SIZE;
const UDP_INPUT_SIZE = FCEU_UDP_HEADER_SIZE + FCEU_INPUT_DATA_SIZE;
const TCP_FRAME_SIZE = FCEU_TCP_FRAME_SIZE;

/** A fresh {@link FceuFrameData} (4 zero controller bytes, command 0) to decode into. */
export function createFceuFrameData(): FceuFrameData {
  return { controllers: new Uint8Array(4), command: 0 };
}

/** A fresh {@link FceuUdpFrame} to reuse with {@link decodeFceuUdpFrameInto}. */
export function createFceuUdpFrame(): FceuUdpFrame {
  return { magic: 0, counter: 0, frame: createFceuFrameData() };
}

/** A fresh {@link FceuUdpInput} to reuse with {@link decodeFceuUdpInputInto}. */
export function createFceuUdpInput(): FceuUdpInput {
  return { magic: 0, counter: 0, controller: 0 };
}

/** A fresh {@link FceuTcpFrame} to reuse with {@link decodeFceuTcpFrameInto}. */
export function createFceuTcpFrame(): FceuTcpFrame {
  return { counter: 0, frame: createFceuFrameData() };
}

/**
 * Checks the UDP datagram `bytes[offset, offset + length)` as `decodeFceuUdpPacket` and then the
 * allocating decoder check it: the range, the header length, the CRC32, then that the data is
 * `dataSize` bytes (else `bad-length` at the data, with `message`, e.g. "FCEU frame data is 5
 * bytes"). Magic and counter are then at `offset + 4` and `offset + 8`, the data at `offset + 12`.
 */
function checkUdpDatagram(bytes: Uint8Array, offset: number, length: number, dataSize: number, message: string): void {
  const end = checkRange(bytes, offset, length, 'FCEU packet');
  if (length < FCEU_UDP_HEADER_SIZE) {
    throw new DecodeError('truncated', end, `FCEU UDP header needs 12 bytes, got ${length}`);
  }
  if (crc32(bytes, offset + 4, end) !== readU32LE(bytes, offset)) {
    throw new DecodeError('bad-checksum', offset, 'FCEU UDP CRC32 mismatch');
  }
  if (length !== FCEU_UDP_HEADER_SIZE + dataSize) {
    throw new DecodeError('bad-length', offset + FCEU_UDP_HEADER_SIZE, `${message}, got ${length - 12}`);
  }
}

/**
 * {@link decodeFceuUdpFrame} into `into`, allocating nothing: decodes the server→client UDP
 * datagram `bytes[offset, offset + length)` (17 bytes; default all of `bytes`), verifying its
 * CRC32, and writes magic, counter, the 4 controller bytes and the command into `into` (whose
 * `frame.controllers` must hold 4 bytes). Returns `into`.
 * @throws DecodeError `truncated` (under 12 bytes, or the range passes the end of `bytes`),
 *   `bad-range` (an offset or length that is not an integer 0..2^32−1),
 *   `bad-checksum`, `bad-length` (data is not 5 bytes), `unknown-type` (command byte); offsets
 *   are indices into `bytes`. `into` is unchanged on a throw.
 */
export function decodeFceuUdpFrameInto<T extends FceuUdpFrame>(
  into: T,
  bytes: Uint8Array,
  offset = 0,
  length: number = Math.max(0, bytes.length - offset),
): T {
  // Fast path: a 17-byte datagram in range with a good CRC and a known command, written in place;
  // anything else through the full checks, which name the problem.
  const size = UDP_FRAME_SIZE;
  const frame = into.frame;
  const c = frame.controllers;
  const command = bytes[offset + 16]!;
  if (
    !(
      length === size &&
      offset >>> 0 === offset &&
      offset + size <= bytes.length &&
      (crc32Update(0, bytes, offset + 4, offset + size) | 0) === readI32LE(bytes, offset) &&
      isFceuCommand(command) &&
      c.length >= 4
    )
  )
    return decodeUdpFrameChecked(into, bytes, offset, length);
  c[0] = bytes[offset + 12]!;
  c[1] = bytes[offset + 13]!;
  c[2] = bytes[offset + 14]!;
  c[3] = bytes[offset + 15]!;
  frame.command = command;
  into.magic = readU32LE(bytes, offset + 4);
  into.counter = readU32LE(bytes, offset + 8);
  return into;
}

/** {@link decodeFceuUdpFrameInto} with every check spelled out (the path of any refusal). */
function decodeUdpFrameChecked<T extends FceuUdpFrame>(into: T, bytes: Uint8Array, offset: number, length: number): T {
  checkUdpDatagram(bytes, offset, length, FCEU_FRAME_DATA_SIZE, 'FCEU frame data is 5 bytes');
  const d = offset + UDP_HEADER;
  const command = frameCommandAt(bytes, d);
  putFrameData(into.frame, bytes, d, command);
  into.magic = readU32LE(bytes, offset + 4);
  into.counter = readU32LE(bytes, offset + 8);
  return into;
}

/**
 * {@link decodeFceuUdpInput} into `into`, allocating nothing: decodes the client→server UDP
 * datagram `bytes[offset, offset + length)` (13 bytes; default all of `bytes`), verifying its
 * CRC32. Returns `into`.
 * @throws DecodeError `truncated` (under 12 bytes, or the range passes the end of `bytes`),
 *   `bad-range` (an offset or length that is not an integer 0..2^32−1),
 *   `bad-checksum`, `bad-length` (data is not 1 byte); offsets are indices into `bytes`. `into`
 *   is unchanged on a throw.
 */
export function decodeFceuUdpInputInto<T extends FceuUdpInput>(
  into: T,
  bytes: Uint8Array,
  offset = 0,
  length: number = Math.max(0, bytes.length - offset),
): T {
  // Fast path: a 13-byte datagram in range with a good CRC, in one branch; else the full checks.
  const size = UDP_INPUT_SIZE;
  if (
    !(
      length === size &&
      offset >>> 0 === offset &&
      offset + size <= bytes.length &&
      (crc32Update(0, bytes, offset + 4, offset + size) | 0) === readI32LE(bytes, offset)
    )
  )
    checkUdpDatagram(bytes, offset, length, FCEU_INPUT_DATA_SIZE, 'FCEU input data is 1 byte');
  into.magic = readU32LE(bytes, offset + 4);
  into.counter = readU32LE(bytes, offset + 8);
  into.controller = bytes[offset + UDP_HEADER]!;
  return into;
}

/**
 * {@link decodeFceuTcpFrame} into `into`, allocating nothing: decodes the TCP frame packet
 * `bytes[offset, offset + length)` (9 bytes, counter ≠ 0xFFFFFFFF; default all of `bytes`).
 * `into.frame.controllers` must hold 4 bytes. Returns `into`.
 * @throws DecodeError `truncated` (under 9 bytes, or the range passes the end of `bytes`),
 *   `bad-range` (an offset or length that is not an integer 0..2^32−1),
 *   `bad-value` (the counter announces a text), `unknown-type` (command byte), `trailing-bytes`
 *   (more than 9 bytes); offsets are indices into `bytes`. `into` is unchanged on a throw.
 */
export function decodeFceuTcpFrameInto<T extends FceuTcpFrame>(
  into: T,
  bytes: Uint8Array,
  offset = 0,
  length: number = Math.max(0, bytes.length - offset),
): T {
  // Fast path: a well-formed 9-byte frame in range, every check in one branch. Anything else goes
  // through the full checks below, which name the problem.
  const frame = into.frame;
  if (length === TCP_FRAME_SIZE && offset >>> 0 === offset && offset + TCP_FRAME_SIZE <= bytes.length) {
    // The counter as an int32 (the text counter 0xFFFFFFFF is -1): no float compare.
    const word = readI32LE(bytes, offset);
    const command = bytes[offset + 8]!;
    const c = frame.controllers;
    if (word !== -1 && isFceuCommand(command) && c.length >= 4) {
      c[0] = bytes[offset + 4]!;
      c[1] = bytes[offset + 5]!;
      c[2] = bytes[offset + 6]!;
      c[3] = bytes[offset + 7]!;
      frame.command = command;
      into.counter = word >>> 0;
      return into;
    }
  }
  return decodeTcpFrameChecked(into, bytes, offset, length);
}

/** {@link decodeFceuTcpFrameInto} with every check spelled out (the path of any refusal). */
function decodeTcpFrameChecked<T extends FceuTcpFrame>(into: T, bytes: Uint8Array, offset: number, length: number): T {
  const end = checkRange(bytes, offset, length, 'FCEU packet');
  if (length < FCEU_TCP_FRAME_SIZE) {
    throw new DecodeError('truncated', end, `FCEU TCP frame needs 9 bytes, got ${length}`);
  }
  const counter = readU32LE(bytes, offset);
  if (counter === FCEU_TEXT_COUNTER) {
    throw new DecodeError('bad-value', offset, 'counter 0xFFFFFFFF is a text message');
  }
  const d = offset + FCEU_TCP_HEADER_SIZE;
  const command = frameCommandAt(bytes, d);
  if (length !== FCEU_TCP_FRAME_SIZE) {
    throw new DecodeError(
      'trailing-bytes',
      offset + FCEU_TCP_FRAME_SIZE,
      `${length - 9} bytes after the FCEU TCP frame`,
    );
  }
  putFrameData(into.frame, bytes, d, command);
  into.counter = counter;
  return into;
}
