import type { FsUaeMessage } from '@netplay/protocol';
import {
  ByteReader,
  DecodeError,
  decodeFsUaeMessage,
  EncodeError,
  encodeFsUaeMessage,
  FSUAE_FRAME_ADVANCE_SIZE,
  FSUAE_INPUT_EVENT_HEADER_SIZE,
  FSUAE_MAX_PAYLOAD,
  FSUAE_PING_SIZE,
  FSUAE_PONG_SIZE,
  fsUaeMessageSize,
} from '@netplay/protocol';

/**
 * Wire format of the frame-advance mode: the FS-UAE message codec of @netplay/protocol (seed 004;
 * input event, frame advance, ping, pong; big-endian, one type byte first), plus one extension:
 *
 * - `0x10` latency info: f64 the sender's largest one-way estimate in ms (for equalizing latency).
 * - `0x15` host progress (issue 13, added after the first release: older peers drop it as an
 *   unknown type): u32 the number of frames the host has run. The host runs frame k only with
 *   every input of k, so every frame below that number is final for everyone. Sent by the host on
 *   `ping` with its pings, by both P2P modes (the mesh reads its pings with this codec too).
 *
 * An input event's payload is `u8 port` followed by the port's input bytes. Ping times are the
 * sender's clock in whole microseconds.
 */
export const FA_LATENCY_INFO = 0x10;
/** Type byte of the host-progress extension (`0x15, u32 frames the host ran`). */
export const FA_HOST_PROGRESS = 0x15;
/** Size of an encoded host-progress message. */
export const FA_HOST_PROGRESS_SIZE = 5;

/** An input event of the frame-advance mode. */
export interface FrameAdvanceEvent {
  /** Frame the event applies on (before the frame runs). */
  readonly frame: number;
  /** Random ordering key (from the sender's seeded PRNG). */
  readonly key: number;
  /** Sender's client id (0..65535), the tie-breaker. */
  readonly client: number;
  /** Port whose input the event sets. */
  readonly port: number;
  /** The port's new input. */
  readonly input: Uint8Array;
}

/** A decoded frame-advance message. */
export type FrameAdvanceMessage =
  | {
      /** `'event'` (type byte 1): an input change, scheduled for a frame. */
      readonly type: 'event';
      /** The decoded event: its frame, ordering key, sender's client id, port and input bytes. */
      readonly event: FrameAdvanceEvent;
    }
  | {
      /** `'advance'` (type byte 2): the sender can no longer schedule events for `frame`. */
      readonly type: 'advance';
      /**
       * The frame (u32) the sender has sent every event for: it sends no more events for this frame
       * or earlier ones, and a frame runs once every peer's advance for it arrived.
       */
      readonly frame: number;
    }
  | {
      /** `'ping'` (type byte 3): a latency probe, answered with a `pong`. */
      readonly type: 'ping';
      /** The pinger's sequence number (u32, wraps), echoed in the pong. */
      readonly seq: number;
      /** When the ping was sent: the sender's clock in whole microseconds (u64 on the wire). */
      readonly sentAtUs: number;
    }
  | {
      /** `'pong'` (type byte 4): the answer to a `ping`. */
      readonly type: 'pong';
      /** The answered ping's sequence number (u32), as the ping carried it. */
      readonly seq: number;
      /** The answered ping's `sentAtUs`, echoed: the pinger's clock in whole µs; its round trip starts here. */
      readonly pingSentAtUs: number;
      /** When the pong was sent: the replier's clock in whole microseconds (u64 on the wire). */
      readonly repliedAtUs: number;
    }
  | {
      /** `'latency'` (extension type byte `0x10`): the sender's largest one-way estimate, for `equalize`. */
      readonly type: 'latency';
      /** The sender's largest one-way estimate to any peer, in ms (f64; finite and ≥ 0, else the decoder rejects it). */
      readonly maxOneWayMs: number;
    }
  /** The host has run frames `0 .. frames − 1` (each with every input): they are final for everyone. */
  | {
      /** `'progress'` (extension type byte `0x15`): the host's finality watermark, sent by the host with its pings. */
      readonly type: 'progress';
      /** How many frames the host has run (u32): every frame below this number is final for everyone. */
      readonly frames: number;
    };

function encode(msg: FsUaeMessage): Uint8Array {
  const out = new Uint8Array(fsUaeMessageSize(msg));
  encodeFsUaeMessage(msg, out);
  return out;
}

/** Encodes an input event (FS-UAE input event, payload = port + input). */
export function encodeFaEvent(e: FrameAdvanceEvent): Uint8Array {
  const payload = new Uint8Array(1 + e.input.length);
  payload[0] = e.port;
  payload.set(e.input, 1);
  return encode({ kind: 'input-event', targetFrame: e.frame, orderKey: e.key, clientId: e.client, payload });
}

/** Encodes "no more events for frames up to `frame`". */
export function encodeFaAdvance(frame: number): Uint8Array {
  return encode({ kind: 'frame-advance', frame });
}

/** Clock ms to the whole microseconds FS-UAE pings carry. */
export function toMicros(ms: number): number {
  return Math.max(0, Math.round(ms * 1000));
}

/** Encodes a ping sent at `nowMs`. */
export function encodeFaPing(seq: number, nowMs: number): Uint8Array {
  return encode({ kind: 'ping', sequence: seq >>> 0, sentAt: toMicros(nowMs) });
}

/** Encodes the answer to a ping. */
export function encodeFaPong(seq: number, pingSentAtUs: number, nowMs: number): Uint8Array {
  return encode({ kind: 'pong', sequence: seq >>> 0, pingSentAt: pingSentAtUs, repliedAt: toMicros(nowMs) });
}

/** Encodes the latency-info extension. */
export function encodeFaLatencyInfo(maxOneWayMs: number): Uint8Array {
  const out = new Uint8Array(9);
  out[0] = FA_LATENCY_INFO;
  new DataView(out.buffer).setFloat64(1, maxOneWayMs);
  return out;
}

/** Encodes the host-progress extension: the host has run `frames` frames. */
export function encodeFaHostProgress(frames: number): Uint8Array {
  const out = new Uint8Array(FA_HOST_PROGRESS_SIZE);
  encodeFaHostProgressInto(frames, out);
  return out;
}

/** Decodes one message; `inputBytes` is the session's input size. Throws only `DecodeError`. */
export function decodeFaMessage(bytes: Uint8Array, inputBytes: number): FrameAdvanceMessage {
  if (bytes.length > 0 && bytes[0] === FA_HOST_PROGRESS) {
    const r = new ByteReader(bytes);
    r.u8('type');
    const frames = r.u32('frames');
    r.expectEnd('host progress');
    return { type: 'progress', frames };
  }
  if (bytes.length > 0 && bytes[0] === FA_LATENCY_INFO) {
    const r = new ByteReader(bytes);
    r.u8('type');
    const maxOneWayMs = r.f64('maxOneWayMs');
    r.expectEnd('latency info');
    if (!(maxOneWayMs >= 0) || !Number.isFinite(maxOneWayMs)) throw new DecodeError('bad-value', 1, 'latency');
    return { type: 'latency', maxOneWayMs };
  }
  const m = decodeFsUaeMessage(bytes);
  switch (m.kind) {
    case 'input-event':
      if (m.payload.length !== 1 + inputBytes)
        throw new DecodeError(
          'bad-length',
          11,
          `event payload of ${m.payload.length} bytes, expected ${1 + inputBytes}`,
        );
      return {
        type: 'event',
        event: {
          frame: m.targetFrame,
          key: m.orderKey,
          client: m.clientId,
          port: m.payload[0]!,
          input: m.payload.slice(1),
        },
      };
    case 'frame-advance':
      return { type: 'advance', frame: m.frame };
    case 'ping':
      return { type: 'ping', seq: m.sequence, sentAtUs: m.sentAt };
    case 'pong':
      return { type: 'pong', seq: m.sequence, pingSentAtUs: m.pingSentAt, repliedAtUs: m.repliedAt };
  }
}

// ---------------------------------------------------------------------------------------------
// The per-frame path: the same bytes, written into and read from caller buffers (no allocation).
// ---------------------------------------------------------------------------------------------

/** Size of an encoded latency-info message. */
export const FA_LATENCY_INFO_SIZE = 9;

/** Size of an encoded input event of `inputBytes` input bytes. */
export function faEventSize(inputBytes: number): number {
  return FSUAE_INPUT_EVENT_HEADER_SIZE + 1 + inputBytes;
}

function putU32(t: Uint8Array, o: number, v: number): void {
  t[o] = v >>> 24;
  t[o + 1] = v >>> 16;
  t[o + 2] = v >>> 8;
  t[o + 3] = v;
}

function getU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function checkU32(v: number, field: string): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new EncodeError('out-of-range', `${field} ${v}`);
}

function putTime(t: Uint8Array, o: number, v: number, field: string): void {
  if (!Number.isSafeInteger(v) || v < 0) throw new EncodeError('out-of-range', `${field} ${v} is not in 0..2^53−1`);
  putU32(t, o, Math.floor(v / 0x100000000));
  putU32(t, o + 4, v >>> 0);
}

/** Checks the high word of the time at `o` (a u64 below 2^53); the caller adds the words. */
function timeHigh(b: Uint8Array, o: number): number {
  const high = getU32(b, o);
  if (high > 0x1fffff) throw new DecodeError('bad-value', o, 'time exceeds 2^53 − 1');
  return high;
}

function room(target: Uint8Array, n: number, what: string): void {
  if (target.length < n) throw new EncodeError('buffer-too-small', `${what} needs ${n} bytes, got ${target.length}`);
}

/** {@link encodeFaEvent} into `target` (at least {@link faEventSize} bytes); returns the size. */
export function encodeFaEventInto(e: FrameAdvanceEvent, target: Uint8Array): number {
  const n = faEventSize(e.input.length);
  checkU32(e.frame, 'frame');
  checkU32(e.key, 'key');
  if ((e.client & 0xffff) !== e.client) throw new EncodeError('out-of-range', `client ${e.client}`);
  if (1 + e.input.length > FSUAE_MAX_PAYLOAD) throw new EncodeError('too-long', 'event payload');
  room(target, n, 'event');
  target[0] = 1;
  putU32(target, 1, e.frame);
  putU32(target, 5, e.key);
  target[9] = e.client >>> 8;
  target[10] = e.client;
  target[11] = 1 + e.input.length;
  target[12] = e.port;
  target.set(e.input, 13);
  return n;
}

/** {@link encodeFaAdvance} into `target` (5 bytes); returns 5. */
export function encodeFaAdvanceInto(frame: number, target: Uint8Array): number {
  checkU32(frame, 'frame');
  room(target, FSUAE_FRAME_ADVANCE_SIZE, 'advance');
  target[0] = 2;
  putU32(target, 1, frame);
  return FSUAE_FRAME_ADVANCE_SIZE;
}

/** {@link encodeFaPing} into `target` (13 bytes); returns 13. */
export function encodeFaPingInto(seq: number, nowMs: number, target: Uint8Array): number {
  room(target, FSUAE_PING_SIZE, 'ping');
  target[0] = 3;
  putU32(target, 1, seq >>> 0);
  putTime(target, 5, toMicros(nowMs), 'sentAt');
  return FSUAE_PING_SIZE;
}

/** {@link encodeFaPong} into `target` (21 bytes); returns 21. */
export function encodeFaPongInto(seq: number, pingSentAtUs: number, nowMs: number, target: Uint8Array): number {
  room(target, FSUAE_PONG_SIZE, 'pong');
  putTime(target, 5, pingSentAtUs, 'pingSentAt');
  putTime(target, 13, toMicros(nowMs), 'repliedAt');
  target[0] = 4;
  putU32(target, 1, seq >>> 0);
  return FSUAE_PONG_SIZE;
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** {@link encodeFaLatencyInfo} into `target` (9 bytes); returns 9. */
export function encodeFaLatencyInfoInto(maxOneWayMs: number, target: Uint8Array): number {
  room(target, FA_LATENCY_INFO_SIZE, 'latency info');
  target[0] = FA_LATENCY_INFO;
  f64[0] = maxOneWayMs;
  for (let i = 0; i < 8; i++) target[1 + i] = f64Bytes[littleEndian ? 7 - i : i]!;
  return FA_LATENCY_INFO_SIZE;
}

/** {@link encodeFaHostProgress} into `target` (5 bytes); returns 5. */
export function encodeFaHostProgressInto(frames: number, target: Uint8Array): number {
  checkU32(frames, 'frames');
  room(target, FA_HOST_PROGRESS_SIZE, 'host progress');
  target[0] = FA_HOST_PROGRESS;
  putU32(target, 1, frames);
  return FA_HOST_PROGRESS_SIZE;
}

/** Message types of {@link FaMessageScratch}. */
export const FaType = {
  Event: 1,
  Advance: 2,
  Ping: 3,
  Pong: 4,
  Latency: FA_LATENCY_INFO,
  Progress: FA_HOST_PROGRESS,
} as const;
/** One of {@link FaType}'s values. */
export type FaType = (typeof FaType)[keyof typeof FaType];

/**
 * A decoded message, reused by {@link decodeFaMessageInto}: only the fields of `type` are set
 * (a host progress's frame count in `frame`).
 * An event's input is `bytes[inputAt .. inputAt + inputBytes)` of the decoded bytes (not a copy).
 */
export interface FaMessageScratch {
  type: FaType;
  frame: number;
  key: number;
  client: number;
  port: number;
  inputAt: number;
  seq: number;
  sentAtUs: number;
  pingSentAtUs: number;
  repliedAtUs: number;
  maxOneWayMs: number;
}

/** A blank {@link FaMessageScratch}. */
export function faMessageScratch(): FaMessageScratch {
  return {
    type: FaType.Advance,
    frame: 0,
    key: 0,
    client: 0,
    port: 0,
    inputAt: 0,
    seq: 0,
    sentAtUs: 0,
    pingSentAtUs: 0,
    repliedAtUs: 0,
    maxOneWayMs: 0,
  };
}

function exact(bytes: Uint8Array, n: number, what: string): void {
  if (bytes.length < n) throw new DecodeError('truncated', bytes.length, `${what} needs ${n} bytes`);
  if (bytes.length > n) throw new DecodeError('trailing-bytes', n, `${bytes.length - n} bytes after the ${what}`);
}

/**
 * {@link decodeFaMessage} into `out`, allocating nothing (the per-frame path). Accepts and rejects
 * exactly the bytes `decodeFaMessage` does; throws only `DecodeError` (and then `out` may be
 * partly overwritten).
 */
export function decodeFaMessageInto(bytes: Uint8Array, inputBytes: number, out: FaMessageScratch): FaMessageScratch {
  if (bytes.length === 0) throw new DecodeError('truncated', 0, 'FS-UAE message type');
  const type = bytes[0]!;
  switch (type) {
    case FA_LATENCY_INFO: {
      exact(bytes, FA_LATENCY_INFO_SIZE, 'latency info');
      for (let i = 0; i < 8; i++) f64Bytes[littleEndian ? 7 - i : i] = bytes[1 + i]!;
      const v = f64[0]!;
      if (!(v >= 0) || !Number.isFinite(v)) throw new DecodeError('bad-value', 1, 'latency');
      out.type = FaType.Latency;
      out.maxOneWayMs = v;
      return out;
    }
    case FA_HOST_PROGRESS:
      exact(bytes, FA_HOST_PROGRESS_SIZE, 'host progress');
      out.type = FaType.Progress;
      out.frame = getU32(bytes, 1);
      return out;
    case 1: {
      if (bytes.length < FSUAE_INPUT_EVENT_HEADER_SIZE) throw new DecodeError('truncated', bytes.length, 'event');
      const length = bytes[11]!;
      exact(bytes, FSUAE_INPUT_EVENT_HEADER_SIZE + length, 'event');
      if (length !== 1 + inputBytes)
        throw new DecodeError('bad-length', 11, `event payload of ${length} bytes, expected ${1 + inputBytes}`);
      out.type = FaType.Event;
      out.frame = getU32(bytes, 1);
      // Inline (not getU32): a u32 of 2^31 or more returned from a call V8 does not inline is boxed,
      // 16 B per received event.
      out.key = ((bytes[5]! << 24) | (bytes[6]! << 16) | (bytes[7]! << 8) | bytes[8]!) >>> 0;
      out.client = (bytes[9]! << 8) | bytes[10]!;
      out.port = bytes[12]!;
      out.inputAt = 13;
      return out;
    }
    case 2:
      exact(bytes, FSUAE_FRAME_ADVANCE_SIZE, 'frame advance');
      out.type = FaType.Advance;
      out.frame = getU32(bytes, 1);
      return out;
    case 3:
      exact(bytes, FSUAE_PING_SIZE, 'ping');
      out.type = FaType.Ping;
      out.seq = getU32(bytes, 1);
      // Times are stored straight into the (double) fields: a returned double past 2^30 would be
      // boxed on every message.
      out.sentAtUs = timeHigh(bytes, 5) * 0x100000000 + getU32(bytes, 9);
      return out;
    case 4:
      exact(bytes, FSUAE_PONG_SIZE, 'pong');
      out.type = FaType.Pong;
      out.seq = getU32(bytes, 1);
      out.pingSentAtUs = timeHigh(bytes, 5) * 0x100000000 + getU32(bytes, 9);
      out.repliedAtUs = timeHigh(bytes, 13) * 0x100000000 + getU32(bytes, 17);
      return out;
    default:
      throw new DecodeError('unknown-type', 0, `FS-UAE message type ${type}`);
  }
}
