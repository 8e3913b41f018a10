import type { MameInputState } from '@netplay/protocol';
import type { Ring } from './pool.js';

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
