import {
  DecodeError,
  MAMEHUB_PACKET_HEADER_SIZE,
  MAMEHUB_PORT_HEADER_SIZE,
  type MameInputState,
} from '@netplay/protocol';
import { type Ring, readU32BE } from './pool.js';

/** Helpers of the mesh mode: packets, masks and the join messages' framing. */

/** A received (or sent) input packet, in a reused ring slot. */
export interface Packet {
  id: number;
  time: number;
  /** Every port's `currentMask` (OR-merged with the other peers'; the other fields are not used). */
  readonly masks: Uint32Array;
}

export function u32msg(type: number, v: number): Uint8Array {
  const m = new Uint8Array(5);
  m[0] = type;
  new DataView(m.buffer).setUint32(1, v);
  return m;
}

export function blankState(ports: number): MameInputState {
  return Array.from({ length: ports }, () => ({ defaultMask: 0, currentMask: 0, analogs: [] }));
}

export function bytesToMask(b: Uint8Array): number {
  let m = 0;
  for (let i = b.length - 1; i >= 0; i--) m = (m * 256 + b[i]!) >>> 0;
  return m;
}

export function stateToBytes(state: MameInputState, inputBytes: number, out: Uint8Array): void {
  // (state: only the current masks are read)
  for (let p = 0; p < state.length; p++) {
    let m = state[p]!.currentMask;
    for (let k = 0; k < inputBytes; k++) {
      out[p * inputBytes + k] = m & 0xff;
      m >>>= 8;
    }
  }
}

/** ORs the masks of the most recent packet at or before `frame` (if any) into `out`. */
export function orPick(packets: Ring<Packet>, frame: number, out: MameInputState): void {
  for (let i = packets.length - 1; i >= 0; i--) {
    const p = packets.at(i);
    if (p.time <= frame) {
      for (let k = 0; k < out.length; k++) out[k]!.currentMask = (out[k]!.currentMask | p.masks[k]!) >>> 0;
      return;
    }
  }
}

/** Drops packets superseded before `frame` (keeps the last one at or before it; times never go back). */
export function prune(packets: Ring<Packet>, frame: number): void {
  while (packets.length >= 2 && packets.at(1).time <= frame) packets.shift();
}

/**
 * Checks input packet `data` (kind byte first) and returns its future input time. The session's
 * packets have one shape (every port, no analog device), so they are read in place: the MAMEHub
 * layout (seed 000, as `decodeMameHubInputPacket` reads it), every other shape or length a
 * `DecodeError`. (`decodeMameHubInputPacketInto` of @netplay/protocol would do, but it has no
 * offset for our kind byte and builds its error texts on every call, ~100 B per packet.)
 */
export function packetTime(data: Uint8Array, ports: number): number {
  const n = 1 + MAMEHUB_PACKET_HEADER_SIZE + ports * MAMEHUB_PORT_HEADER_SIZE;
  if (data.length !== n) throw new DecodeError('bad-length', 1, 'packet shape');
  if (data[13] !== ports) throw new DecodeError('bad-value', 13, 'packet ports');
  for (let i = 0; i < ports; i++)
    if (data[22 + i * MAMEHUB_PORT_HEADER_SIZE] !== 0) throw new DecodeError('bad-value', 1, 'packet shape');
  const high = readU32BE(data, 5);
  if (high > 0x1fffff) throw new DecodeError('bad-value', 5, 'futureInputTime exceeds 2^53 − 1');
  return high * 0x100000000 + readU32BE(data, 9);
}

/** Reads a checked packet's id and masks into `slot` (its time set by the caller). */
export function readPacketMasks(data: Uint8Array, ports: number, slot: Packet): void {
  slot.id = readU32BE(data, 1);
  for (let i = 0; i < ports; i++) slot.masks[i] = readU32BE(data, 18 + i * MAMEHUB_PORT_HEADER_SIZE);
}
