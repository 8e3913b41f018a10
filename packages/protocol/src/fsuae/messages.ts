import { checkOffset } from '../byte-range.js';
import { DecodeError, EncodeError } from '../errors.js';

/*
 * FS-UAE peer-to-peer netplay messages (seed 004). The seed describes the messages, not their
 * bytes; this is our layout (big-endian), one type byte first so all share a channel:
 *
 *   0x01 input event    u8 type | u32 targetFrame | u32 orderKey | u16 clientId | u8 payloadLength | payload
 *   0x02 frame advance  u8 type | u32 frame
 *   0x03 ping           u8 type | u32 sequence | u64 sentAt
 *   0x04 pong           u8 type | u32 sequence | u64 pingSentAt | u64 repliedAt
 *
 * Timestamps are unsigned integers ≤ 2^53 − 1 in the sender's clock unit (e.g. microseconds of an
 * injected Clock). Several messages may follow one another in one packet.
 */

/** The type byte of each FS-UAE message. */
export enum FsUaeMessageType {
  /** {@link FsUaeInputEvent}. */
  InputEvent = 1,
  /** {@link FsUaeFrameAdvance}. */
  FrameAdvance = 2,
  /** {@link FsUaePing}. */
  Ping = 3,
  /** {@link FsUaePong}. */
  Pong = 4,
}

/** An input event scheduled for a frame; all peers apply a frame's events in {@link compareFsUaeInputEvents} order. */
export interface FsUaeInputEvent {
  /** Discriminant; type byte 0x01 on the wire, a message of 12 bytes plus the payload. */
  readonly kind: 'input-event';
  /** The frame the event applies at (uint32). */
  targetFrame: number;
  /** A random key (uint32) that orders the events of one frame. */
  orderKey: number;
  /** The sending client's unique id (uint16); breaks ties of `orderKey`. */
  clientId: number;
  /** The event itself, 0–255 bytes (e.g. FS-UAE's input event code and state). Decoded as a view. */
  payload: Uint8Array;
}

/** "I will schedule no more events for frames up to and including `frame`." */
export interface FsUaeFrameAdvance {
  /** Discriminant; type byte 0x02 on the wire, a 5-byte message. */
  readonly kind: 'frame-advance';
  /** uint32. */
  frame: number;
}

/** A latency probe. */
export interface FsUaePing {
  /** Discriminant; type byte 0x03 on the wire, a 13-byte message. */
  readonly kind: 'ping';
  /** Identifies the probe (uint32). */
  sequence: number;
  /** The sender's clock when sent. */
  sentAt: number;
}

/** The answer to a ping: echoes its sequence and time, adds the responder's clock. */
export interface FsUaePong {
  /** Discriminant; type byte 0x04 on the wire, a 21-byte message. */
  readonly kind: 'pong';
  /** The ping's sequence. */
  sequence: number;
  /** The ping's `sentAt`, echoed: round-trip time = now − pingSentAt. */
  pingSentAt: number;
  /** The responder's clock when replying (for clock-offset estimates). */
  repliedAt: number;
}

/** Any FS-UAE message. */
export type FsUaeMessage = FsUaeInputEvent | FsUaeFrameAdvance | FsUaePing | FsUaePong;

/** Most payload bytes of an input event. */
export const FSUAE_MAX_PAYLOAD = 255;
/** Size of an input event without its payload. */
export const FSUAE_INPUT_EVENT_HEADER_SIZE = 12;
/** Size of a frame advance. */
export const FSUAE_FRAME_ADVANCE_SIZE = 5;
/** Size of a ping. */
export const FSUAE_PING_SIZE = 13;
/** Size of a pong. */
export const FSUAE_PONG_SIZE = 21;

/** Encoded size of `msg`. */
export function fsUaeMessageSize(msg: FsUaeMessage): number {
  switch (msg.kind) {
    case 'input-event':
      return FSUAE_INPUT_EVENT_HEADER_SIZE + msg.payload.length;
    case 'frame-advance':
      return FSUAE_FRAME_ADVANCE_SIZE;
    case 'ping':
      return FSUAE_PING_SIZE;
    case 'pong':
      return FSUAE_PONG_SIZE;
  }
}

function u32(v: number, field: string): void {
  if (v >>> 0 !== v) throw new EncodeError('out-of-range', `${field} ${v} is not a u32`);
}

function time(v: number, field: string): void {
  if (!Number.isSafeInteger(v) || v < 0) throw new EncodeError('out-of-range', `${field} ${v} is not in 0..2^53−1`);
}

function putU32(t: Uint8Array, o: number, v: number): void {
  t[o] = v >>> 24;
  t[o + 1] = v >>> 16;
  t[o + 2] = v >>> 8;
  t[o + 3] = v;
}

function putTime(t: Uint8Array, o: number, v: number): void {
  putU32(t, o, Math.floor(v / 0x100000000));
  putU32(t, o + 4, v >>> 0);
}

function getU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function getTime(b: Uint8Array, o: number, field: string): number {
  const high = getU32(b, o);
  if (high > 0x1fffff) throw new DecodeError('bad-value', o, `${field} exceeds 2^53 − 1`);
  return high * 0x100000000 + getU32(b, o + 4);
}

/** Writes `msg` at `offset` and returns the bytes written. Allocates nothing. */
export function encodeFsUaeMessage(msg: FsUaeMessage, target: Uint8Array, offset = 0): number {
  const size = fsUaeMessageSize(msg);
  switch (msg.kind) {
    case 'input-event':
      u32(msg.targetFrame, 'targetFrame');
      u32(msg.orderKey, 'orderKey');
      if ((msg.clientId & 0xffff) !== msg.clientId) throw new EncodeError('out-of-range', `clientId ${msg.clientId}`);
      if (msg.payload.length > FSUAE_MAX_PAYLOAD) {
        throw new EncodeError('too-long', `payload of ${msg.payload.length} bytes exceeds ${FSUAE_MAX_PAYLOAD}`);
      }
      break;
    case 'frame-advance':
      u32(msg.frame, 'frame');
      break;
    case 'ping':
      u32(msg.sequence, 'sequence');
      time(msg.sentAt, 'sentAt');
      break;
    case 'pong':
      u32(msg.sequence, 'sequence');
      time(msg.pingSentAt, 'pingSentAt');
      time(msg.repliedAt, 'repliedAt');
      break;
  }
  if (!(offset >= 0) || offset + size > target.length) {
    throw new EncodeError(
      'buffer-too-small',
      `FS-UAE ${msg.kind} needs ${size} bytes at offset ${offset} of ${target.length}`,
    );
  }
  const o = offset;
  switch (msg.kind) {
    case 'input-event':
      target[o] = FsUaeMessageType.InputEvent;
      putU32(target, o + 1, msg.targetFrame);
      putU32(target, o + 5, msg.orderKey);
      target[o + 9] = msg.clientId >>> 8;
      target[o + 10] = msg.clientId;
      target[o + 11] = msg.payload.length;
      target.set(msg.payload, o + FSUAE_INPUT_EVENT_HEADER_SIZE);
      break;
    case 'frame-advance':
      target[o] = FsUaeMessageType.FrameAdvance;
      putU32(target, o + 1, msg.frame);
      break;
    case 'ping':
      target[o] = FsUaeMessageType.Ping;
      putU32(target, o + 1, msg.sequence);
      putTime(target, o + 5, msg.sentAt);
      break;
    case 'pong':
      target[o] = FsUaeMessageType.Pong;
      putU32(target, o + 1, msg.sequence);
      putTime(target, o + 5, msg.pingSentAt);
      putTime(target, o + 13, msg.repliedAt);
      break;
  }
  return size;
}

function need(bytes: Uint8Array, o: number, n: number, what: string): void {
  if (o + n > bytes.length)
    throw new DecodeError('truncated', o, `${what} needs ${n} bytes, ${bytes.length - o} remain`);
}

/**
 * Reads the message at `offset` and returns it with its size; the next message (if any) starts
 * at `offset + size`. An input event's payload is a view into `bytes`. Throws only `DecodeError`
 * (`bad-range` for an offset that is not an integer 0..2^32−1).
 */
export function readFsUaeMessage(
  bytes: Uint8Array,
  offset = 0,
): {
  /** The message read; an input event's payload is a view into `bytes`. */
  message: FsUaeMessage;
  /** The bytes it took on the wire, from `offset`: the next message of the packet starts at `offset + size`. */
  size: number;
} {
  checkOffset(offset, 'FS-UAE message');
  need(bytes, offset, 1, 'FS-UAE message type');
  const type = bytes[offset]!;
  const o = offset;
  switch (type) {
    case FsUaeMessageType.InputEvent: {
      need(bytes, o, FSUAE_INPUT_EVENT_HEADER_SIZE, 'FS-UAE input event');
      const length = bytes[o + 11]!;
      need(bytes, o + FSUAE_INPUT_EVENT_HEADER_SIZE, length, 'FS-UAE input event payload');
      const start = o + FSUAE_INPUT_EVENT_HEADER_SIZE;
      return {
        message: {
          kind: 'input-event',
          targetFrame: getU32(bytes, o + 1),
          orderKey: getU32(bytes, o + 5),
          clientId: (bytes[o + 9]! << 8) | bytes[o + 10]!,
          payload: bytes.subarray(start, start + length),
        },
        size: FSUAE_INPUT_EVENT_HEADER_SIZE + length,
      };
    }
    case FsUaeMessageType.FrameAdvance:
      need(bytes, o, FSUAE_FRAME_ADVANCE_SIZE, 'FS-UAE frame advance');
      return { message: { kind: 'frame-advance', frame: getU32(bytes, o + 1) }, size: FSUAE_FRAME_ADVANCE_SIZE };
    case FsUaeMessageType.Ping:
      need(bytes, o, FSUAE_PING_SIZE, 'FS-UAE ping');
      return {
        message: { kind: 'ping', sequence: getU32(bytes, o + 1), sentAt: getTime(bytes, o + 5, 'sentAt') },
        size: FSUAE_PING_SIZE,
      };
    case FsUaeMessageType.Pong:
      need(bytes, o, FSUAE_PONG_SIZE, 'FS-UAE pong');
      return {
        message: {
          kind: 'pong',
          sequence: getU32(bytes, o + 1),
          pingSentAt: getTime(bytes, o + 5, 'pingSentAt'),
          repliedAt: getTime(bytes, o + 13, 'repliedAt'),
        },
        size: FSUAE_PONG_SIZE,
      };
    default:
      throw new DecodeError('unknown-type', o, `FS-UAE message type ${type}`);
  }
}

/** Decodes exactly one message (`trailing-bytes` if more follow). */
export function decodeFsUaeMessage(bytes: Uint8Array): FsUaeMessage {
  const { message, size } = readFsUaeMessage(bytes, 0);
  if (size !== bytes.length)
    throw new DecodeError('trailing-bytes', size, `${bytes.length - size} bytes after the message`);
  return message;
}

/** Decodes a packet holding several messages back to back (at most one per 5 bytes). */
export function decodeFsUaeMessages(bytes: Uint8Array): FsUaeMessage[] {
  const out: FsUaeMessage[] = [];
  for (let o = 0; o < bytes.length; ) {
    const { message, size } = readFsUaeMessage(bytes, o);
    out.push(message);
    o += size;
  }
  return out;
}

/**
 * The order in which every peer applies the input events of a frame: by target frame, then
 * order key, then client id (as the seed proposes), then payload bytes (lexicographically, the
 * shorter first on a common prefix) so that even a client's duplicate keys order the same way
 * everywhere. Returns a negative number, zero or a positive number, for `Array.prototype.sort`.
 */
export function compareFsUaeInputEvents(a: FsUaeInputEvent, b: FsUaeInputEvent): number {
  if (a.targetFrame !== b.targetFrame) return a.targetFrame - b.targetFrame;
  if (a.orderKey !== b.orderKey) return a.orderKey - b.orderKey;
  if (a.clientId !== b.clientId) return a.clientId - b.clientId;
  const n = Math.min(a.payload.length, b.payload.length);
  for (let i = 0; i < n; i++) if (a.payload[i] !== b.payload[i]) return a.payload[i]! - b.payload[i]!;
  return a.payload.length - b.payload.length;
}
