import type { Core } from '../core.js';
import { StateRegistry } from '../registry.js';

/**
 * The README's example: the smallest useful `Core`. Two players move a dot left or right
 * (input bit 0: right, bit 1: left); the frame counter and the positions are its whole state,
 * registered in a {@link StateRegistry} that does the saving, loading and hashing.
 */
export class ExampleGame implements Core {
  readonly ports = 2;
  readonly inputBytes = 1;
  private readonly registry = new StateRegistry();
  private readonly clock = new Uint32Array(1);
  private readonly x = new Int16Array(2);
  private readonly inputs = new Uint8Array(2);

  constructor() {
    this.registry.register('game', 0, 'frame', this.clock);
    this.registry.register('game', 0, 'x', this.x);
    this.registry.freeze();
  }
  get frame(): number {
    return this.clock[0]!;
  }
  get stateBytes(): number {
    return this.registry.snapshotBytes;
  }
  /** The dot positions (for tests and display). */
  get positions(): readonly number[] {
    return [...this.x];
  }
  setInput(port: number, input: Uint8Array): void {
    this.inputs[port] = input[0]!;
  }
  advance(): void {
    for (let p = 0; p < 2; p++) this.x[p]! += (this.inputs[p]! & 1) - ((this.inputs[p]! >> 1) & 1);
    this.clock[0]!++;
  }
  saveInto(target: Uint8Array): number {
    return this.registry.saveInto(target);
  }
  load(state: Uint8Array): void {
    this.registry.load(state);
  }
  checksum(): bigint {
    return this.registry.checksum();
  }
  reset(): void {
    this.clock.fill(0);
    this.x.fill(0);
    this.inputs.fill(0);
  }
}
