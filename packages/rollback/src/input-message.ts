import { DecodeError, EncodeError } from '@netplay/protocol';
import { RollbackError } from './errors.js';

/*
 * INPUT, wire version 2 (type 0x11, unreliable channel). Big-endian; "varint" is LEB128 (at most
 * 5 bytes), "zigzag" maps a signed n to an unsigned varint (0, -1, 1, -2 … → 0, 1, 2, 3 …).
 *
 *   0  u8   type = 0x11
 *   1  u8   flags: 0x01 INPUTS, 0x02 REF (the first input is XORed against frame start−1, which
 *           the receiver holds), 0x04 HELD_ALL, 0x08 ECHO, 0x10 EPOCH, 0x20 LOSS, 0x40 CHECKSUMS,
 *           0x80 reserved (0)
 *   2  u16  seq       per-link message counter (mod 2^16): freshness and the RTT echo
 *   4  u16  frame     sender's current frame (mod 2^16; the receiver takes the value nearest its own)
 *   6  u16  ack       next frame of the RECEIVER's player the sender lacks (mod 2^16, same rule)
 *   8  …    zigzag(held − frame) unless HELD_ALL: the sender holds every input of every frame
 *           before `held` (HELD_ALL: every input it will ever need)
 *      …    zigzag(advantage in 1/16 frame)
 *      [ECHO]      u16 echoSeq (the newest seq the sender received from the receiver), varint echoDelay
 *                  (ms between receiving it and sending this, ≤ 65534)
 *      [EPOCH]     u8 host decisions broadcast (host) or applied (others), mod 256 (absent: 0)
 *      [LOSS]      u8 loss the sender measured on the receiver → sender direction, in 1/256 (absent: 0)
 *      [CHECKSUMS] u8 repairs applied (mod 256), u8 count 1..8, count × (u16 frame mod 2^16,
 *                  u64 checksum), newest first
 *      [INPUTS]    u16 start frame (mod 2^16), u8 count 1..255, then the runs of the protocol's
 *                  input-stream codec (its 8-byte header left out) up to the end of the message
 */

/** Type byte of a version-2 INPUT message. */
export const INPUT_V2 = 0x11;
/** Type bytes of version-1 INPUT and CHECKSUM: a peer sending them gets a `version` error. */
export const INPUT_V1 = 1;
export const CHECKSUM_V1 = 2;
/** The session wire version. */
export const WIRE_VERSION = 2;

export const Flag = {
  Inputs: 0x01,
  Ref: 0x02,
  HeldAll: 0x04,
  Echo: 0x08,
  Epoch: 0x10,
  Loss: 0x20,
  Checksums: 0x40,
} as const;

/** Checksums one message carries at most (the sender's latest exchange frames). */
export const CHECKSUMS_PER_MESSAGE = 8;
/** `echoDelay` meaning "no echo". */
export const NO_ECHO = 0xffff;
/** `held` meaning "every input" (HELD_ALL). */
export const HELD_ALL = 0xffffffff;
/** Bytes of the fixed part (before the varints). */
export const INPUT_FIXED_BYTES = 8;
/** The input-stream codec's header, left out on the wire. */
const STREAM_HEADER = 8;

/** A decoded (or to-be-encoded) INPUT message. Frames are whole numbers (resolved on decode). */
export interface InputMessage {
  seq: number;
  frame: number;
  ack: number;
  held: number;
  advantage16: number;
  /** Newest seq received from the receiver (u16), with `echoDelay` ms; `echoDelay` {@link NO_ECHO}: none. */
  echoSeq: number;
  echoDelay: number;
  epoch: number;
  loss: number;
  /** Checksums: count 0 = none. Frames in `sumFrames`, 8 bytes each in `sumBytes`. */
  sumCount: number;
  sumRepairs: number;
  readonly sumFrames: Int32Array;
  readonly sumBytes: Uint8Array;
  /** Inputs: count 0 = none; the runs are `bytes[runsAt, end)` of the decoded message. */
  inputCount: number;
  inputStart: number;
  inputRef: boolean;
  runsAt: number;
}

export function blankInputMessage(): InputMessage {
  return {
    seq: 0,
    frame: 0,
    ack: 0,
    held: 0,
    advantage16: 0,
    echoSeq: 0,
    echoDelay: NO_ECHO,
    epoch: 0,
    loss: 0,
    sumCount: 0,
    sumRepairs: 0,
    sumFrames: new Int32Array(CHECKSUMS_PER_MESSAGE),
    sumBytes: new Uint8Array(8 * CHECKSUMS_PER_MESSAGE),
    inputCount: 0,
    inputStart: 0,
    inputRef: false,
    runsAt: 0,
  };
}

/** The whole number ≡ `v16` (mod 2^16) nearest `near` (never negative). */
export function resolve16(v16: number, near: number): number {
  const r = near + ((((v16 - near) & 0xffff) << 16) >> 16);
  return r < 0 ? r + 0x10000 : r;
}

function putVarint(b: Uint8Array, o: number, v: number): number {
  while (v >= 0x80) {
    b[o++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  b[o++] = v;
  return o;
}

function zigzag(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/** Where the decoder is (module scratch: decoding is synchronous). */
let pos = 0;

function getVarint(b: Uint8Array, what: string): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5; i++) {
    if (pos >= b.length) throw new DecodeError('truncated', pos, `INPUT ${what} ends early`);
    const byte = b[pos++]!;
    v += (byte & 0x7f) * mul;
    if (byte < 0x80) return v;
    mul *= 128;
  }
  throw new DecodeError('bad-value', pos, `INPUT ${what}: varint longer than 5 bytes`);
}

function need(b: Uint8Array, n: number, what: string): void {
  if (pos + n > b.length) throw new DecodeError('truncated', b.length, `INPUT ${what} needs ${n} more bytes`);
}

/**
 * Writes everything but the inputs into `b` (from 0); returns the offset where the inputs go. The
 * caller then writes them with {@link writeInputs} (or leaves them out).
 * `m.sumBytes` holds the checksums when `m.sumCount > 0`.
 */
export function writeInputMessageHead(b: Uint8Array, m: InputMessage): number {
  let flags = 0;
  if (m.held >= HELD_ALL) flags |= Flag.HeldAll;
  if (m.echoDelay !== NO_ECHO) flags |= Flag.Echo;
  if (m.epoch !== 0) flags |= Flag.Epoch;
  if (m.loss !== 0) flags |= Flag.Loss;
  if (m.sumCount > 0) flags |= Flag.Checksums;
  b[0] = INPUT_V2;
  b[1] = flags;
  b[2] = m.seq >>> 8;
  b[3] = m.seq;
  b[4] = m.frame >>> 8;
  b[5] = m.frame;
  b[6] = m.ack >>> 8;
  b[7] = m.ack;
  let o = INPUT_FIXED_BYTES;
  if (m.held < HELD_ALL) o = putVarint(b, o, zigzag(m.held - m.frame));
  o = putVarint(b, o, zigzag(m.advantage16));
  if (m.echoDelay !== NO_ECHO) {
    b[o++] = m.echoSeq >>> 8;
    b[o++] = m.echoSeq;
    o = putVarint(b, o, m.echoDelay);
  }
  if (m.epoch !== 0) b[o++] = m.epoch;
  if (m.loss !== 0) b[o++] = m.loss;
  if (m.sumCount > 0) {
    if (m.sumCount > CHECKSUMS_PER_MESSAGE)
      throw new EncodeError('out-of-range', `${m.sumCount} checksums, at most ${CHECKSUMS_PER_MESSAGE}`);
    b[o++] = m.sumRepairs;
    b[o++] = m.sumCount;
    for (let i = 0; i < m.sumCount; i++) {
      const f = m.sumFrames[i]!;
      b[o++] = f >>> 8;
      b[o++] = f;
      for (let k = 0; k < 8; k++) b[o++] = m.sumBytes[i * 8 + k]!;
    }
  }
  return o;
}

/**
 * Appends the inputs: `stream` is a whole input-stream packet of the protocol codec (`n` bytes, its
 * 8-byte header first); its header is replaced by the compact one. Sets the INPUTS (and REF) flags.
 * Returns the message's length.
 */
export function writeInputs(b: Uint8Array, at: number, stream: Uint8Array, n: number): number {
  const start = ((stream[0]! << 24) | (stream[1]! << 16) | (stream[2]! << 8) | stream[3]!) >>> 0;
  b[1] = b[1]! | Flag.Inputs | (stream[7] !== 0 ? Flag.Ref : 0);
  b[at] = start >>> 8;
  b[at + 1] = start;
  b[at + 2] = stream[4]!;
  let o = at + 3;
  for (let i = STREAM_HEADER; i < n; i++) b[o++] = stream[i]!;
  return o;
}

/**
 * Reads an INPUT message into `m`; whole frames are resolved near `near` (the receiver's current
 * frame) and, for `ack`, near `ackNear` (the receiver's newest own input + 1). Throws `DecodeError`
 * on malformed bytes and `RollbackError('version')` for a version-1 message.
 */
export function readInputMessage(b: Uint8Array, m: InputMessage, near: number, ackNear: number): void {
  if (b.length > 0 && (b[0] === INPUT_V1 || b[0] === CHECKSUM_V1)) throw versionError(b[0]!);
  if (b.length < INPUT_FIXED_BYTES)
    throw new DecodeError('truncated', b.length, `INPUT needs ${INPUT_FIXED_BYTES} bytes, got ${b.length}`);
  if (b[0] !== INPUT_V2) throw new DecodeError('unknown-type', 0, `not an INPUT message: type ${b[0]}`);
  const flags = b[1]!;
  if ((flags & 0x80) !== 0) throw new DecodeError('bad-value', 1, `unknown INPUT flags ${flags}`);
  if ((flags & Flag.Ref) !== 0 && (flags & Flag.Inputs) === 0)
    throw new DecodeError('bad-value', 1, 'INPUT flag REF without INPUTS');
  m.seq = (b[2]! << 8) | b[3]!;
  m.frame = resolve16((b[4]! << 8) | b[5]!, near);
  m.ack = resolve16((b[6]! << 8) | b[7]!, ackNear);
  pos = INPUT_FIXED_BYTES;
  if ((flags & Flag.HeldAll) !== 0) m.held = HELD_ALL;
  else m.held = Math.max(0, Math.min(HELD_ALL - 1, m.frame + unzigzag(getVarint(b, 'held'))));
  const adv = unzigzag(getVarint(b, 'advantage'));
  if (adv < -32768 || adv > 32767) throw new DecodeError('bad-value', pos, `advantage ${adv} out of range`);
  m.advantage16 = adv;
  if ((flags & Flag.Echo) !== 0) {
    need(b, 2, 'echo');
    m.echoSeq = (b[pos]! << 8) | b[pos + 1]!;
    pos += 2;
    const d = getVarint(b, 'echo delay');
    if (d >= NO_ECHO) throw new DecodeError('bad-value', pos, `echo delay ${d} out of range`);
    m.echoDelay = d;
  } else m.echoDelay = NO_ECHO;
  if ((flags & Flag.Epoch) !== 0) {
    need(b, 1, 'epoch');
    m.epoch = b[pos++]!;
  } else m.epoch = 0;
  if ((flags & Flag.Loss) !== 0) {
    need(b, 1, 'loss');
    m.loss = b[pos++]!;
  } else m.loss = 0;
  m.sumCount = 0;
  if ((flags & Flag.Checksums) !== 0) {
    need(b, 2, 'checksums');
    m.sumRepairs = b[pos]!;
    const count = b[pos + 1]!;
    if (count < 1 || count > CHECKSUMS_PER_MESSAGE)
      throw new DecodeError('bad-value', pos + 1, `${count} checksums, expected 1..${CHECKSUMS_PER_MESSAGE}`);
    pos += 2;
    need(b, 10 * count, 'checksums');
    for (let i = 0; i < count; i++) {
      m.sumFrames[i] = resolve16((b[pos]! << 8) | b[pos + 1]!, near);
      for (let k = 0; k < 8; k++) m.sumBytes[i * 8 + k] = b[pos + 2 + k]!;
      pos += 10;
    }
    m.sumCount = count;
  }
  m.inputCount = 0;
  m.inputRef = false;
  if ((flags & Flag.Inputs) !== 0) {
    need(b, 3, 'inputs');
    m.inputStart = resolve16((b[pos]! << 8) | b[pos + 1]!, near);
    const count = b[pos + 2]!;
    if (count === 0) throw new DecodeError('bad-value', pos + 2, 'INPUT with 0 input frames');
    m.inputCount = count;
    m.inputRef = (flags & Flag.Ref) !== 0;
    pos += 3;
    if (pos >= b.length) throw new DecodeError('truncated', pos, 'INPUT inputs without runs');
  } else if (pos !== b.length) {
    throw new DecodeError('trailing-bytes', pos, `INPUT of ${pos} bytes has ${b.length - pos} more`);
  }
  m.runsAt = pos;
}

/**
 * Rebuilds the protocol codec's packet of the inputs of `m` (read from `b`) into `out` (its 8-byte
 * header, then the runs); returns its length. `out` must hold `8 + b.length − m.runsAt` bytes.
 */
export function inputStreamOf(b: Uint8Array, m: InputMessage, inputBytes: number, out: Uint8Array): number {
  const s = m.inputStart;
  out[0] = s >>> 24;
  out[1] = s >>> 16;
  out[2] = s >>> 8;
  out[3] = s;
  out[4] = m.inputCount;
  out[5] = inputBytes >>> 8;
  out[6] = inputBytes;
  out[7] = m.inputRef ? 1 : 0;
  let o = STREAM_HEADER;
  for (let i = m.runsAt; i < b.length; i++) out[o++] = b[i]!;
  return o;
}

/** The typed error a version-1 message gets. */
export function versionError(type: number): RollbackError {
  return new RollbackError(
    'version',
    `peer speaks session wire version 1 (message type ${type}); this session speaks version ${WIRE_VERSION}: upgrade both peers`,
  );
}
