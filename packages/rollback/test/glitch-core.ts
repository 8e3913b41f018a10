import type { Core } from '@netplay/state';
import { TestCore } from '@netplay/state/testing';

/** A core with a bug: when it simulates frame `glitchFrame`, it reads player 0's input wrong. */
export class GlitchCore implements Core {
  private readonly inner: TestCore;
  private readonly input0: Uint8Array;
  constructor(
    players: number,
    private readonly glitchFrame: number,
  ) {
    this.inner = new TestCore({ players });
    this.input0 = new Uint8Array(this.inner.inputBytes);
  }
  get frame(): number {
    return this.inner.frame;
  }
  get ports(): number {
    return this.inner.ports;
  }
  get inputBytes(): number {
    return this.inner.inputBytes;
  }
  get stateBytes(): number {
    return this.inner.stateBytes;
  }
  setInput(port: number, input: Uint8Array): void {
    if (port === 0) this.input0.set(input);
    this.inner.setInput(port, input);
  }
  advance(): void {
    if (this.inner.frame === this.glitchFrame) {
      const wrong = this.input0.map((b) => b ^ 0x55);
      this.inner.setInput(0, wrong);
    }
    this.inner.advance();
  }
  saveInto(target: Uint8Array): number {
    return this.inner.saveInto(target);
  }
  load(state: Uint8Array): void {
    this.inner.load(state);
  }
  checksum(): bigint {
    return this.inner.checksum();
  }
  reset(): void {
    this.inner.reset();
  }
}
