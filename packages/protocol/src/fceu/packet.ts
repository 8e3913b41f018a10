import { checkOffset } from '../byte-range.js';
import { crc32 } from '../crc32.js';
import { DecodeError, EncodeError } from '../errors.js';
import { isFceuCommand } from './command.js';
import { frameCommandAt, putFrameData } from './frame-data.js';
import { readU32LE, writeU32LE } from './le.js';

/*
 * FCE Ultra 0.91 packets. Every uint32 is little-endian, as FCE Ultra's `en32` writes it.
 *   UDP: [u32 crc32][u32 magic][u32 counter][data]   crc32 (zlib) over magic, counter and data
 *   TCP: [u32 counter][data]                          counter 0xFFFFFFFF announces a text message
 *   server→client data: [u8 pad0][u8 pad1][u8 pad2][u8 pad3][u8 command]
 *   client→server data: [u8 pad]
 */

/** Bytes before the data of a UDP packet: CRC32, magic, counter. */
export const FCEU_UDP_HEADER_SIZE = 12;
/** Bytes before the data of a TCP packet: the counter. */
export const FCEU_TCP_HEADER_SIZE = 4;
/** Size of the server→client frame data: 4 controller bytes and a command byte. */
export const FCEU_FRAME_DATA_SIZE = 5;
/** Size of the client→server data: one controller byte. */
export const FCEU_INPUT_DATA_SIZE = 1;
/** UDP packet carrying server→client frame data. */
export const FCEU_UDP_FRAME_SIZE = FCEU_UDP_HEADER_SIZE + FCEU_FRAME_DATA_SIZE;
/** UDP packet carrying a client's controller byte. */
export const FCEU_UDP_INPUT_SIZE = FCEU_UDP_HEADER_SIZE + FCEU_INPUT_DATA_SIZE;
/** TCP packet carrying server→client frame data. */
export const FCEU_TCP_FRAME_SIZE = FCEU_TCP_HEADER_SIZE + FCEU_FRAME_DATA_SIZE;
/** The TCP packet counter that announces a text message instead of frame data. */
export const FCEU_TEXT_COUNTER = 0xffffffff;

/** Server→client frame data: what every client applies for one emulated frame. */
export interface FceuFrameData {
  /** The four controller bytes, players 0–3 (exactly 4 bytes). */
  controllers: Uint8Array;
  /** A {@link FceuCommand} code, 0 if none. */
  command: number;
}

/**
 * A server→client UDP frame datagram: what {@link decodeFceuUdpFrame} returns and
 * {@link decodeFceuUdpFrameInto} fills in place (see {@link createFceuUdpFrame}).
 */
export interface FceuUdpFrame {
  /** The session's magic number (returned, not checked). */
  magic: number;
  /** The packet counter. */
  counter: number;
  /** The frame data. */
  frame: FceuFrameData;
}

/**
 * A client→server UDP input datagram: what {@link decodeFceuUdpInput} returns and
 * {@link decodeFceuUdpInputInto} fills in place (see {@link createFceuUdpInput}).
 */
export interface FceuUdpInput {
  /** The session's magic number (returned, not checked). */
  magic: number;
  /** The packet counter. */
  counter: number;
  /** The client's controller byte. */
  controller: number;
}

/**
 * A server→client TCP frame packet: what {@link decodeFceuTcpFrame} returns and
 * {@link decodeFceuTcpFrameInto} fills in place (see {@link createFceuTcpFrame}).
 */
export interface FceuTcpFrame {
  /** The packet counter (never 0xFFFFFFFF, which announces a text). */
  counter: number;
  /** The frame data. */
  frame: FceuFrameData;
}

/** A decoded UDP packet. `data` is a view into the input bytes, not a copy. */
export interface FceuUdpPacket {
  /** The CRC32 it carried (already verified). */
  crc: number;
  /** The session's magic number. */
  magic: number;
  /** The packet counter. */
  counter: number;
  /** The payload (a view). */
  data: Uint8Array;
}

function room(target: Uint8Array, offset: number, n: number, what: string): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + n > target.length) {
    throw new EncodeError('buffer-too-small', `${what} needs ${n} bytes at offset ${offset} of ${target.length}`);
  }
}

function u32(v: number, field: string): void {
  // Written as one comparison chain so the hot path stays cheap.
  if (!(v >= 0 && v <= 0xffffffff && Math.floor(v) === v)) throw new EncodeError('out-of-range', `${field} ${v}`);
}

function u8(v: number, field: string): void {
  if (!(v >= 0 && v <= 0xff && Math.floor(v) === v)) throw new EncodeError('out-of-range', `${field} ${v}`);
}

const putU32 = writeU32LE;
const getU32 = readU32LE;

function checkFrame(frame: FceuFrameData): void {
  if (frame.controllers.length !== 4) {
    throw new EncodeError('out-of-range', `controllers has ${frame.controllers.length} bytes, not 4`);
  }
  if (!isFceuCommand(frame.command)) throw new EncodeError('out-of-range', `command ${frame.command} is not known`);
}

function putFrame(t: Uint8Array, o: number, frame: FceuFrameData): void {
  const c = frame.controllers;
  t[o] = c[0]!;
  t[o + 1] = c[1]!;
  t[o + 2] = c[2]!;
  t[o + 3] = c[3]!;
  t[o + 4] = frame.command;
}

/** Writes the 5-byte server→client frame data; returns 5. Throws `EncodeError` on an unknown command. */
export function encodeFceuFrameData(frame: FceuFrameData, target: Uint8Array, offset = 0): number {
  room(target, offset, FCEU_FRAME_DATA_SIZE, 'FCEU frame data');
  checkFrame(frame);
  putFrame(target, offset, frame);
  return FCEU_FRAME_DATA_SIZE;
}

/**
 * Reads 5 bytes of frame data at `offset`. With `out`, fills it and allocates nothing (its
 * `controllers` must hold 4 bytes). Throws `DecodeError('unknown-type')` for a command byte the
 * seed does not define, `truncated` when fewer than 5 bytes remain, `bad-range` for an offset that
 * is not an integer 0..2^32−1.
 */
export function decodeFceuFrameData(bytes: Uint8Array, offset = 0, out?: FceuFrameData): FceuFrameData {
  checkOffset(offset, 'FCEU frame data');
  if (offset + FCEU_FRAME_DATA_SIZE > bytes.length) {
    throw new DecodeError('truncated', Math.min(offset, bytes.length), 'FCEU frame data needs 5 bytes');
  }
  const command = frameCommandAt(bytes, offset);
  const frame = out ?? { controllers: new Uint8Array(4), command: 0 };
  putFrameData(frame, bytes, offset, command);
  return frame;
}

function sealUdp(target: Uint8Array, offset: number, magic: number, counter: number, dataLength: number): void {
  putU32(target, offset + 4, magic);
  putU32(target, offset + 8, counter);
  putU32(target, offset, crc32(target, offset + 4, offset + FCEU_UDP_HEADER_SIZE + dataLength));
}

/**
 * Writes a UDP packet around arbitrary `data`: CRC32 (zlib, over magic, counter and data),
 * magic, counter, data. Returns the bytes written (12 + data length).
 */
export function encodeFceuUdpPacket(
  magic: number,
  counter: number,
  data: Uint8Array,
  target: Uint8Array,
  offset = 0,
): number {
  const n = FCEU_UDP_HEADER_SIZE + data.length;
  room(target, offset, n, 'FCEU UDP packet');
  u32(magic, 'magic');
  u32(counter, 'counter');
  target.set(data, offset + FCEU_UDP_HEADER_SIZE);
  sealUdp(target, offset, magic, counter, data.length);
  return n;
}

/** Writes the UDP packet a server sends every frame (17 bytes); allocates nothing. */
export function encodeFceuUdpFrame(
  magic: number,
  counter: number,
  frame: FceuFrameData,
  target: Uint8Array,
  offset = 0,
): number {
  room(target, offset, FCEU_UDP_FRAME_SIZE, 'FCEU UDP frame');
  u32(magic, 'magic');
  u32(counter, 'counter');
  checkFrame(frame);
  putFrame(target, offset + FCEU_UDP_HEADER_SIZE, frame);
  sealUdp(target, offset, magic, counter, FCEU_FRAME_DATA_SIZE);
  return FCEU_UDP_FRAME_SIZE;
}

/** Writes the UDP packet a client sends every frame: its one controller byte (13 bytes). */
export function encodeFceuUdpInput(
  magic: number,
  counter: number,
  controller: number,
  target: Uint8Array,
  offset = 0,
): number {
  room(target, offset, FCEU_UDP_INPUT_SIZE, 'FCEU UDP input');
  u32(magic, 'magic');
  u32(counter, 'counter');
  u8(controller, 'controller');
  target[offset + FCEU_UDP_HEADER_SIZE] = controller;
  sealUdp(target, offset, magic, counter, FCEU_INPUT_DATA_SIZE);
  return FCEU_UDP_INPUT_SIZE;
}

/**
 * Decodes a whole UDP datagram and verifies its CRC32 (`bad-checksum` otherwise). The magic is
 * returned, not checked: the session's magic is the caller's (see {@link FceuUdpReceiver}).
 */
export function decodeFceuUdpPacket(bytes: Uint8Array): FceuUdpPacket {
  if (bytes.length < FCEU_UDP_HEADER_SIZE) {
    throw new DecodeError('truncated', bytes.length, `FCEU UDP header needs 12 bytes, got ${bytes.length}`);
  }
  const crc = getU32(bytes, 0);
  if (crc32(bytes, 4) !== crc) throw new DecodeError('bad-checksum', 0, 'FCEU UDP CRC32 mismatch');
  return { crc, magic: getU32(bytes, 4), counter: getU32(bytes, 8), data: bytes.subarray(FCEU_UDP_HEADER_SIZE) };
}

/**
 * Decodes a UDP datagram carrying server→client frame data (exactly 17 bytes). Allocates the
 * result; {@link decodeFceuUdpFrameInto} is the same decoder into a reused object.
 */
export function decodeFceuUdpFrame(bytes: Uint8Array): FceuUdpFrame {
  const p = decodeFceuUdpPacket(bytes);
  if (p.data.length !== FCEU_FRAME_DATA_SIZE) {
    throw new DecodeError('bad-length', FCEU_UDP_HEADER_SIZE, `FCEU frame data is 5 bytes, got ${p.data.length}`);
  }
  return { magic: p.magic, counter: p.counter, frame: decodeFceuFrameData(bytes, FCEU_UDP_HEADER_SIZE) };
}

/**
 * Decodes a UDP datagram carrying a client's controller byte (exactly 13 bytes). Allocates the
 * result; {@link decodeFceuUdpInputInto} is the same decoder into a reused object.
 */
export function decodeFceuUdpInput(bytes: Uint8Array): FceuUdpInput {
  const p = decodeFceuUdpPacket(bytes);
  if (p.data.length !== FCEU_INPUT_DATA_SIZE) {
    throw new DecodeError('bad-length', FCEU_UDP_HEADER_SIZE, `FCEU input data is 1 byte, got ${p.data.length}`);
  }
  return { magic: p.magic, counter: p.counter, controller: p.data[0]! };
}

/**
 * Writes a TCP packet around arbitrary `data`: the counter, then the data. Returns the bytes
 * written (4 + data length). The counter 0xFFFFFFFF is reserved for text messages and refused.
 */
export function encodeFceuTcpPacket(counter: number, data: Uint8Array, target: Uint8Array, offset = 0): number {
  const n = FCEU_TCP_HEADER_SIZE + data.length;
  room(target, offset, n, 'FCEU TCP packet');
  u32(counter, 'counter');
  if (counter === FCEU_TEXT_COUNTER) throw new EncodeError('out-of-range', 'counter 0xFFFFFFFF marks a text message');
  putU32(target, offset, counter);
  target.set(data, offset + FCEU_TCP_HEADER_SIZE);
  return n;
}

/** Decodes a whole TCP packet of known extent: the counter and the data (a view). */
export function decodeFceuTcpPacket(bytes: Uint8Array): {
  /** u32 LE at offset 0: the packet counter, linear from 0 (never 0xFFFFFFFF, which announces a text). */
  counter: number;
  /** The bytes after the counter, a view into `bytes`: for a server frame, 4 controller bytes and a command byte. */
  data: Uint8Array;
} {
  if (bytes.length < FCEU_TCP_HEADER_SIZE) {
    throw new DecodeError('truncated', bytes.length, `FCEU TCP packet needs 4 bytes, got ${bytes.length}`);
  }
  const counter = getU32(bytes, 0);
  if (counter === FCEU_TEXT_COUNTER) throw new DecodeError('bad-value', 0, 'counter 0xFFFFFFFF is a text message');
  return { counter, data: bytes.subarray(FCEU_TCP_HEADER_SIZE) };
}

/**
 * Writes the TCP packet a server sends every frame next to the UDP one (9 bytes). The counter
 * 0xFFFFFFFF is reserved for text messages and refused.
 */
export function encodeFceuTcpFrame(counter: number, frame: FceuFrameData, target: Uint8Array, offset = 0): number {
  room(target, offset, FCEU_TCP_FRAME_SIZE, 'FCEU TCP frame');
  u32(counter, 'counter');
  if (counter === FCEU_TEXT_COUNTER) throw new EncodeError('out-of-range', 'counter 0xFFFFFFFF marks a text message');
  checkFrame(frame);
  putU32(target, offset, counter);
  putFrame(target, offset + FCEU_TCP_HEADER_SIZE, frame);
  return FCEU_TCP_FRAME_SIZE;
}

/**
 * Decodes exactly one TCP frame packet (9 bytes, counter ≠ 0xFFFFFFFF). Allocates the result;
 * {@link decodeFceuTcpFrameInto} is the same decoder into a reused object.
 */
export function decodeFceuTcpFrame(bytes: Uint8Array): FceuTcpFrame {
  if (bytes.length < FCEU_TCP_FRAME_SIZE) {
    throw new DecodeError('truncated', bytes.length, `FCEU TCP frame needs 9 bytes, got ${bytes.length}`);
  }
  const counter = getU32(bytes, 0);
  if (counter === FCEU_TEXT_COUNTER) throw new DecodeError('bad-value', 0, 'counter 0xFFFFFFFF is a text message');
  const frame = decodeFceuFrameData(bytes, FCEU_TCP_HEADER_SIZE);
  if (bytes.length !== FCEU_TCP_FRAME_SIZE) {
    throw new DecodeError('trailing-bytes', FCEU_TCP_FRAME_SIZE, `${bytes.length - 9} bytes after the FCEU TCP frame`);
  }
  return { counter, frame };
}
