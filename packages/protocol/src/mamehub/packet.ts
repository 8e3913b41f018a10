import { DecodeError, EncodeError } from '../errors.js';
import type { MameAnalogState, MameInputState, MamePortState } from './input-state.js';

/*
 * MAMEHub input packet. MAMEHub's own byte layout is not in the seed; this is ours (big-endian):
 *
 *   0   u32  inputId           incremental counter per client, from 0
 *   4   u64  futureInputTime   emulated time the input applies at, ≤ 2^53 − 1 (unit agreed by peers)
 *   12  u8   portCount
 *   then per port:
 *       u32  defaultMask
 *       u32  currentMask
 *       u8   analogCount
 *       then per analog device (13 bytes):
 *           i32 accumulatedDelta
 *           i32 previousValue
 *           i32 sensitivity
 *           u8  reverse (0 or 1)
 */

/** A MAMEHub input packet: what one client wants its inputs to be at a future time. */
export interface MameHubInputPacket {
  /** Incremental counter (uint32); receivers expect 0, 1, 2, … from each client. */
  inputId: number;
  /** The future input time: emulated time (in a unit the peers agree on) the state applies from. */
  futureInputTime: number;
  /** The input state, port by port. */
  state: MameInputState;
}

/** Bytes before the first port. */
export const MAMEHUB_PACKET_HEADER_SIZE = 13;
/** Bytes of a port before its analog devices. */
export const MAMEHUB_PORT_HEADER_SIZE = 9;
/** Bytes of one analog device. */
export const MAMEHUB_ANALOG_SIZE = 13;
/** Most ports (and most analog devices per port) the layout can carry. */
export const MAMEHUB_MAX_COUNT = 255;

/** Encoded size of a packet carrying `state`. */
export function mameHubInputPacketSize(state: readonly MamePortState[]): number {
  let n = MAMEHUB_PACKET_HEADER_SIZE + state.length * MAMEHUB_PORT_HEADER_SIZE;
  for (const p of state) n += p.analogs.length * MAMEHUB_ANALOG_SIZE;
  return n;
}

function putU32(t: Uint8Array, o: number, v: number): void {
  t[o] = v >>> 24;
  t[o + 1] = v >>> 16;
  t[o + 2] = v >>> 8;
  t[o + 3] = v;
}

function getI32(b: Uint8Array, o: number): number {
  return (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
}

function isU32(v: number): boolean {
  return v >>> 0 === v;
}

function isI32(v: number): boolean {
  return (v | 0) === v && !Object.is(v, -0);
}

/**
 * Writes `packet` at `offset` and returns the bytes written. Allocates nothing. Throws
 * `EncodeError` for out-of-range fields, more than 255 ports or analog devices, or too small a target.
 */
export function encodeMameHubInputPacket(packet: MameHubInputPacket, target: Uint8Array, offset = 0): number {
  const { inputId, futureInputTime, state } = packet;
  if (!isU32(inputId)) throw new EncodeError('out-of-range', `inputId ${inputId}`);
  if (!Number.isSafeInteger(futureInputTime) || futureInputTime < 0) {
    throw new EncodeError('out-of-range', `futureInputTime ${futureInputTime}`);
  }
  if (state.length > MAMEHUB_MAX_COUNT) throw new EncodeError('too-long', `${state.length} ports exceed 255`);
  const size = mameHubInputPacketSize(state);
  if (!(offset >= 0) || offset + size > target.length) {
    throw new EncodeError(
      'buffer-too-small',
      `MAMEHub packet needs ${size} bytes at offset ${offset} of ${target.length}`,
    );
  }
  let o = offset;
  putU32(target, o, inputId);
  putU32(target, o + 4, Math.floor(futureInputTime / 0x100000000));
  putU32(target, o + 8, futureInputTime >>> 0);
  target[o + 12] = state.length;
  o += MAMEHUB_PACKET_HEADER_SIZE;
  for (let i = 0; i < state.length; i++) {
    const port = state[i]!;
    if (!isU32(port.defaultMask)) throw new EncodeError('out-of-range', `port ${i} defaultMask ${port.defaultMask}`);
    if (!isU32(port.currentMask)) throw new EncodeError('out-of-range', `port ${i} currentMask ${port.currentMask}`);
    const analogs = port.analogs;
    if (analogs.length > MAMEHUB_MAX_COUNT)
      throw new EncodeError('too-long', `port ${i} has ${analogs.length} analogs`);
    putU32(target, o, port.defaultMask);
    putU32(target, o + 4, port.currentMask);
    target[o + 8] = analogs.length;
    o += MAMEHUB_PORT_HEADER_SIZE;
    for (let j = 0; j < analogs.length; j++) {
      const a = analogs[j]!;
      if (!isI32(a.accumulatedDelta) || !isI32(a.previousValue) || !isI32(a.sensitivity)) {
        throw new EncodeError('out-of-range', `port ${i} analog ${j} has a field that is not an int32`);
      }
      putU32(target, o, a.accumulatedDelta);
      putU32(target, o + 4, a.previousValue);
      putU32(target, o + 8, a.sensitivity);
      target[o + 12] = a.reverse ? 1 : 0;
      o += MAMEHUB_ANALOG_SIZE;
    }
  }
  return o - offset;
}

/**
 * Throws `truncated` unless `n` bytes remain at `o`. The field is named by `what`, or by
 * `port <port>` (with `devices` analog devices when given): names are built only on failure, so
 * the hot decode path allocates no strings.
 */
function need(bytes: Uint8Array, o: number, n: number, what: string | number, devices = -1): void {
  if (o + n > bytes.length) {
    const name =
      typeof what === 'string' ? what : devices < 0 ? `port ${what}` : `port ${what}: ${devices} analog devices`;
    throw new DecodeError('truncated', o, `${name} needs ${n} bytes, ${bytes.length - o} remain`);
  }
}

function readHeader(bytes: Uint8Array): { inputId: number; futureInputTime: number; portCount: number } {
  need(bytes, 0, MAMEHUB_PACKET_HEADER_SIZE, 'MAMEHub packet header');
  const high = getI32(bytes, 4) >>> 0;
  if (high > 0x1fffff) throw new DecodeError('bad-value', 4, 'futureInputTime exceeds 2^53 − 1');
  return {
    inputId: getI32(bytes, 0) >>> 0,
    futureInputTime: high * 0x100000000 + (getI32(bytes, 8) >>> 0),
    portCount: bytes[12]!,
  };
}

function readAnalog(bytes: Uint8Array, o: number, a: MameAnalogState): void {
  const r = bytes[o + 12]!;
  if (r > 1) throw new DecodeError('bad-value', o + 12, `reverse is ${r}, not 0 or 1`);
  a.accumulatedDelta = getI32(bytes, o);
  a.previousValue = getI32(bytes, o + 4);
  a.sensitivity = getI32(bytes, o + 8);
  a.reverse = r === 1;
}

/**
 * Decodes exactly one input packet. Every count is checked against the bytes that remain before
 * an array is allocated, so the allocation is bounded by the input's length. Throws only `DecodeError`.
 */
export function decodeMameHubInputPacket(bytes: Uint8Array): MameHubInputPacket {
  const { inputId, futureInputTime, portCount } = readHeader(bytes);
  let o = MAMEHUB_PACKET_HEADER_SIZE;
  need(bytes, o, portCount * MAMEHUB_PORT_HEADER_SIZE, `${portCount} ports`);
  const state: MameInputState = [];
  for (let i = 0; i < portCount; i++) {
    need(bytes, o, MAMEHUB_PORT_HEADER_SIZE, i);
    const defaultMask = getI32(bytes, o) >>> 0;
    const currentMask = getI32(bytes, o + 4) >>> 0;
    const count = bytes[o + 8]!;
    o += MAMEHUB_PORT_HEADER_SIZE;
    need(bytes, o, count * MAMEHUB_ANALOG_SIZE, i, count);
    const analogs: MameAnalogState[] = [];
    for (let j = 0; j < count; j++) {
      const a: MameAnalogState = { accumulatedDelta: 0, previousValue: 0, sensitivity: 0, reverse: false };
      readAnalog(bytes, o, a);
      analogs.push(a);
      o += MAMEHUB_ANALOG_SIZE;
    }
    state.push({ defaultMask, currentMask, analogs });
  }
  if (o !== bytes.length)
    throw new DecodeError('trailing-bytes', o, `${bytes.length - o} bytes after the MAMEHub packet`);
  return { inputId, futureInputTime, state };
}

/**
 * Decodes exactly one input packet into `out`, whose state must already have the packet's shape
 * (`bad-value` otherwise, at the count that differs). Allocates nothing: the per-frame path.
 */
export function decodeMameHubInputPacketInto(bytes: Uint8Array, out: MameHubInputPacket): MameHubInputPacket {
  need(bytes, 0, MAMEHUB_PACKET_HEADER_SIZE, 'MAMEHub packet header');
  const high = getI32(bytes, 4) >>> 0;
  if (high > 0x1fffff) throw new DecodeError('bad-value', 4, 'futureInputTime exceeds 2^53 − 1');
  const state = out.state;
  if (bytes[12] !== state.length) {
    throw new DecodeError('bad-value', 12, `packet has ${bytes[12]} ports, expected ${state.length}`);
  }
  // Check the whole shape and length first so a failure leaves `out` untouched.
  let o = MAMEHUB_PACKET_HEADER_SIZE;
  for (let i = 0; i < state.length; i++) {
    need(bytes, o, MAMEHUB_PORT_HEADER_SIZE, i);
    const count = bytes[o + 8]!;
    if (count !== state[i]!.analogs.length) {
      throw new DecodeError(
        'bad-value',
        o + 8,
        `port ${i} has ${count} analog devices, expected ${state[i]!.analogs.length}`,
      );
    }
    o += MAMEHUB_PORT_HEADER_SIZE;
    need(bytes, o, count * MAMEHUB_ANALOG_SIZE, i, count);
    for (let j = 0; j < count; j++) {
      const r = bytes[o + 12]!;
      if (r > 1) throw new DecodeError('bad-value', o + 12, `reverse is ${r}, not 0 or 1`);
      o += MAMEHUB_ANALOG_SIZE;
    }
  }
  if (o !== bytes.length)
    throw new DecodeError('trailing-bytes', o, `${bytes.length - o} bytes after the MAMEHub packet`);
  out.inputId = getI32(bytes, 0) >>> 0;
  out.futureInputTime = high * 0x100000000 + (getI32(bytes, 8) >>> 0);
  o = MAMEHUB_PACKET_HEADER_SIZE;
  for (let i = 0; i < state.length; i++) {
    const port = state[i]!;
    port.defaultMask = getI32(bytes, o) >>> 0;
    port.currentMask = getI32(bytes, o + 4) >>> 0;
    o += MAMEHUB_PORT_HEADER_SIZE;
    for (let j = 0; j < port.analogs.length; j++) {
      readAnalog(bytes, o, port.analogs[j]!);
      o += MAMEHUB_ANALOG_SIZE;
    }
  }
  return out;
}
