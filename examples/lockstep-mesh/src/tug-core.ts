import type { Core } from '@netplay/state';

/**
 * A tiny three-player game implementing the @netplay/state `Core` contract by hand: a rope whose
 * knot each player pulls toward its own corner (input bit 0) of a triangle. State: frame counter,
 * knot position (x, y) and a running mix of every input, 16 bytes.
 */
export class TugCore implements Core {
  readonly ports = 3;
  readonly inputBytes = 1;
  readonly stateBytes = 16;
  private readonly bytes = new Uint8Array(16);
  private readonly view = new DataView(this.bytes.buffer);
  private readonly inputs = new Uint8Array(3);

  get frame(): number {
    return this.view.getUint32(0, true);
  }

  /** The knot's position. */
  get knot(): [number, number] {
    return [this.view.getInt32(4, true), this.view.getInt32(8, true)];
  }

  setInput(port: number, input: Uint8Array): void {
    this.inputs[port] = input[0] ?? 0;
  }

  advance(): void {
    const v = this.view;
    const pull = [
      [0, 2],
      [-2, -1],
      [2, -1],
    ] as const;
    let x = v.getInt32(4, true);
    let y = v.getInt32(8, true);
    let mix = v.getUint32(12, true);
    for (let p = 0; p < 3; p++) {
      const i = this.inputs[p]!;
      if (i & 1) {
        x += pull[p]![0];
        y += pull[p]![1];
      }
      mix = (Math.imul(mix ^ i, 16777619) + p) >>> 0;
    }
    v.setInt32(4, x, true);
    v.setInt32(8, y, true);
    v.setUint32(12, mix, true);
    v.setUint32(0, this.frame + 1, true);
  }

  saveInto(target: Uint8Array): number {
    target.set(this.bytes);
    return 16;
  }

  load(state: Uint8Array): void {
    if (state.length < 16) throw new RangeError(`a TugCore state is 16 bytes, got ${state.length}`);
    this.bytes.set(state.subarray(0, 16));
  }

  checksum(): bigint {
    let h = 0xcbf29ce484222325n;
    for (const b of this.bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
    return h;
  }

  reset(): void {
    this.bytes.fill(0);
    this.inputs.fill(0);
  }
}
