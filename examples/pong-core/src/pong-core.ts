import type { Core } from '@netplay/state';

/** Input bits of one player (one byte per player per frame). */
export const UP = 1;
export const DOWN = 2;

const STATE_BYTES = 20;

/**
 * A tiny deterministic game implementing the @netplay/state `Core` contract by hand: two paddles
 * and a ball on a 64 × 32 field. Its whole state is 20 bytes in one buffer (frame counter,
 * paddles, ball, scores), so saving is a copy and the checksum a hash of those bytes.
 */
export class PongCore implements Core {
  readonly ports = 2;
  readonly inputBytes = 1;
  readonly stateBytes = STATE_BYTES;
  private readonly bytes = new Uint8Array(STATE_BYTES);
  private readonly view = new DataView(this.bytes.buffer);
  private readonly inputs = new Uint8Array(2);

  constructor() {
    this.reset();
  }

  get frame(): number {
    return this.view.getUint32(0, true);
  }

  /** Scores of both players. */
  get scores(): [number, number] {
    return [this.view.getUint16(16, true), this.view.getUint16(18, true)];
  }

  setInput(port: number, input: Uint8Array): void {
    this.inputs[port] = input[0] ?? 0;
  }

  advance(): void {
    const v = this.view;
    for (let p = 0; p < 2; p++) {
      const i = this.inputs[p]!;
      const y = v.getInt16(4 + 2 * p, true) + ((i & DOWN) !== 0 ? 1 : 0) - ((i & UP) !== 0 ? 1 : 0);
      v.setInt16(4 + 2 * p, Math.max(0, Math.min(28, y)), true);
    }
    let bx = v.getInt16(8, true) + v.getInt8(12);
    let by = v.getInt16(10, true) + v.getInt8(13);
    if (by <= 0 || by >= 31) v.setInt8(13, -v.getInt8(13));
    if (bx <= 0 || bx >= 63) {
      const side = bx <= 0 ? 0 : 1;
      const paddle = v.getInt16(4 + 2 * side, true);
      if (by >= paddle && by < paddle + 4) v.setInt8(12, -v.getInt8(12));
      else {
        const scorer = 1 - side;
        v.setUint16(16 + 2 * scorer, v.getUint16(16 + 2 * scorer, true) + 1, true);
        bx = 32;
        by = 16;
      }
    }
    v.setInt16(8, Math.max(0, Math.min(63, bx)), true);
    v.setInt16(10, Math.max(0, Math.min(31, by)), true);
    v.setUint32(0, this.frame + 1, true);
  }

  saveInto(target: Uint8Array): number {
    target.set(this.bytes);
    return STATE_BYTES;
  }

  load(state: Uint8Array): void {
    if (state.length < STATE_BYTES)
      throw new RangeError(`a PongCore state is ${STATE_BYTES} bytes, got ${state.length}`);
    this.bytes.set(state.subarray(0, STATE_BYTES));
  }

  checksum(): bigint {
    return fnv1a64(this.bytes);
  }

  reset(): void {
    this.bytes.fill(0);
    const v = this.view;
    v.setInt16(4, 14, true);
    v.setInt16(6, 14, true);
    v.setInt16(8, 32, true);
    v.setInt16(10, 16, true);
    v.setInt8(12, 1);
    v.setInt8(13, 1);
    this.inputs.fill(0);
  }
}

/** FNV-1a, 64 bits, of `bytes`. */
export function fnv1a64(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}
