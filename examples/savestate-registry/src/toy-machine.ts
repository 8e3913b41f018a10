import { type Core, StateRegistry } from '@netplay/state';

/**
 * A toy 8-bit machine: an accumulator CPU (registers A, X, PC, flags as typed arrays), 4 KiB of
 * RAM, a bank-switch latch behind accessors, a battery-backed high-score table (NVRAM), and a
 * derived pointer rebuilt after every load. Everything the machine is lives in a `StateRegistry`,
 * which saves, loads and hashes it; the machine only registers where its state is.
 */
export class ToyMachine implements Core {
  readonly ports = 1;
  readonly inputBytes = 1;
  readonly registry = new StateRegistry();
  private readonly regs = new Uint8Array(3); // A, X, flags
  private readonly pc = new Uint16Array(1);
  private readonly frames = new Uint32Array(1);
  readonly ram = new Uint8Array(4096);
  readonly hiscores = new Uint32Array(4);
  private bank = 0;
  /** Derived state (not saved): the RAM window of the current bank, rebuilt after a load. */
  private window: Uint8Array;
  private input = 0;

  constructor() {
    const r = this.registry;
    r.register('cpu', 0, 'regs', this.regs);
    r.register('cpu', 0, 'pc', this.pc);
    r.register('machine', 0, 'frame', this.frames);
    r.register('machine', 0, 'ram', this.ram);
    r.register('machine', 0, 'bank', {
      type: 'u8',
      get: () => this.bank,
      set: (v: number) => {
        this.bank = v;
      },
    });
    r.register('machine', 0, 'hiscores', this.hiscores, { nvram: true });
    r.onPostload(() => {
      this.window = this.ram.subarray(this.bank * 1024, this.bank * 1024 + 1024);
    });
    r.freeze();
    this.window = this.ram.subarray(0, 1024);
  }

  get frame(): number {
    return this.frames[0]!;
  }
  get stateBytes(): number {
    return this.registry.snapshotBytes;
  }
  /** The current bank (0..3). */
  get currentBank(): number {
    return this.bank;
  }
  setInput(_port: number, input: Uint8Array): void {
    this.input = input[0] ?? 0;
  }
  /** One frame: 64 "instructions" mixing the input into RAM, a bank switch every 50 frames. */
  advance(): void {
    for (let i = 0; i < 64; i++) {
      const pc = this.pc[0]!;
      this.regs[0] = (this.regs[0]! + this.window[pc & 1023]! + this.input) & 0xff;
      this.regs[1] = (this.regs[1]! ^ this.regs[0]!) & 0xff;
      this.window[(pc * 7) & 1023] = this.regs[1]!;
      this.regs[2] = this.regs[0] === 0 ? 1 : 0;
      this.pc[0] = (pc + 1 + this.regs[0]!) & 0xffff;
    }
    this.frames[0]!++;
    if (this.frames[0]! % 50 === 0) {
      this.bank = (this.bank + 1) & 3;
      this.window = this.ram.subarray(this.bank * 1024, this.bank * 1024 + 1024);
      this.hiscores[this.bank] = Math.max(this.hiscores[this.bank]!, this.regs[0]! * 1000);
    }
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
    this.regs.fill(0);
    this.pc.fill(0);
    this.frames.fill(0);
    this.ram.fill(0);
    this.bank = 0;
    this.window = this.ram.subarray(0, 1024);
  }
}
