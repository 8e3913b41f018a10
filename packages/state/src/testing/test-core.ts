import type { Core } from '../core.js';
import { StateError } from '../errors.js';
import { PageTracker } from '../page-tracker.js';
import { StateRegistry } from '../registry.js';

/** Options of {@link TestCore}. */
export interface TestCoreOptions {
  /** Number of input ports (players), 1..64 (default 2). */
  readonly players?: number;
  /** Bytes of input per port per frame, 1..1024 (default 2). */
  readonly inputBytes?: number;
  /** Size of the core's RAM in bytes (default 256). */
  readonly ramBytes?: number;
  /** Power-on seed of the core's PRNG (default 1); cores with different seeds diverge. */
  readonly seed?: number;
  /**
   * Make the core deliberately NOT deterministic: every `advance()` also mixes in a counter that
   * lives outside the registered state, so replaying the same inputs after `load()` gives another
   * state. For testing desync detection (SyncTest); it is still reproducible run to run.
   */
  readonly nondeterministic?: boolean;
  /**
   * Track the pages of the savestate that `advance()` writes, with pages of this many bytes (a
   * power of two, 256..1 MiB): the core then has a `pageTracker` (`load()` and `reset()` mark
   * every page). Off by default.
   */
  readonly trackPages?: number;
}

/**
 * A small deterministic emulator core for scheduler tests (lockstep, rollback, SyncTest): N
 * players, configurable input size, state kept in a {@link StateRegistry} (frame counter, PRNG,
 * per-player positions as arrays, per-player scores through accessors, a RAM block the inputs
 * are mixed into). Every input bit of every port affects the state, so a wrong or missing input
 * shows up in the checksum.
 */
export class TestCore implements Core {
  readonly ports: number;
  readonly inputBytes: number;
  /** The registry holding the whole state; exposed for tests that inspect or extend it. */
  readonly registry = new StateRegistry();
  private readonly seed: number;
  private readonly nondeterministic: boolean;
  private readonly clock = new Uint32Array(1);
  private readonly rng = new Uint32Array(1);
  private readonly positions: Int16Array;
  private readonly scores: Uint32Array;
  private readonly ram: Uint8Array;
  private readonly inputs: Uint8Array;
  private hidden = 0;
  /** Set with the `trackPages` option: the savestate pages each `advance()` writes. */
  readonly pageTracker?: PageTracker;
  /** Snapshot offsets of frame, rng, ram, then position and score of each player (with `trackPages`). */
  private readonly offsets: Uint32Array = new Uint32Array(0);

  constructor(options: TestCoreOptions = {}) {
    const players = options.players ?? 2;
    const inputBytes = options.inputBytes ?? 2;
    const ramBytes = options.ramBytes ?? 256;
    if (!Number.isInteger(players) || players < 1 || players > 64)
      throw new StateError('bad-argument', `players must be 1..64, got ${players}`);
    if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 1024)
      throw new StateError('bad-argument', `inputBytes must be 1..1024, got ${inputBytes}`);
    if (!Number.isInteger(ramBytes) || ramBytes < 1)
      throw new StateError('bad-argument', `ramBytes must be a positive integer, got ${ramBytes}`);
    this.ports = players;
    this.inputBytes = inputBytes;
    this.seed = (options.seed ?? 1) >>> 0 || 1;
    this.nondeterministic = options.nondeterministic === true;
    this.positions = new Int16Array(players * 2);
    this.scores = new Uint32Array(players);
    this.ram = new Uint8Array(ramBytes);
    this.inputs = new Uint8Array(players * inputBytes);
    const r = this.registry;
    r.register('core', 0, 'frame', this.clock);
    r.register('core', 0, 'rng', this.rng);
    r.register('core', 0, 'ram', this.ram);
    for (let p = 0; p < players; p++) {
      r.register('player', p, 'position', this.positions.subarray(p * 2, p * 2 + 2));
      const scores = this.scores;
      r.register('player', p, 'score', {
        type: 'u32',
        get: () => scores[p]!,
        set: (v: number) => {
          scores[p] = v;
        },
      });
    }
    r.freeze();
    if (options.trackPages !== undefined) {
      this.pageTracker = new PageTracker(r.snapshotBytes, options.trackPages);
      const o = [
        r.snapshotOffset('core', 0, 'frame'),
        r.snapshotOffset('core', 0, 'rng'),
        r.snapshotOffset('core', 0, 'ram'),
      ];
      for (let p = 0; p < players; p++)
        o.push(r.snapshotOffset('player', p, 'position'), r.snapshotOffset('player', p, 'score'));
      this.offsets = Uint32Array.from(o);
    }
    this.reset();
  }

  get frame(): number {
    return this.clock[0]!;
  }

  get stateBytes(): number {
    return this.registry.snapshotBytes;
  }

  /** Player `p`'s position `[x, y]` (for assertions and demos). */
  position(p: number): [number, number] {
    return [this.positions[p * 2]!, this.positions[p * 2 + 1]!];
  }

  /** Player `p`'s score. */
  score(p: number): number {
    return this.scores[p]!;
  }

  setInput(port: number, input: Uint8Array): void {
    if (!Number.isInteger(port) || port < 0 || port >= this.ports)
      throw new StateError('bad-argument', `port ${port} is not 0..${this.ports - 1}`);
    if (input.length !== this.inputBytes)
      throw new StateError('bad-argument', `input of ${input.length} bytes, expected ${this.inputBytes}`);
    this.inputs.set(input, port * this.inputBytes);
  }

  advance(): void {
    const n = this.inputBytes;
    const ram = this.ram;
    let s = this.rng[0]!;
    for (let p = 0; p < this.ports; p++) {
      const b0 = this.inputs[p * n]!;
      // Bits 0..3 of the first byte steer; every input byte is mixed into RAM and the score.
      this.positions[p * 2]! += (b0 & 1) - ((b0 >> 1) & 1);
      this.positions[p * 2 + 1]! += ((b0 >> 2) & 1) - ((b0 >> 3) & 1);
      for (let k = 0; k < n; k++) {
        const b = this.inputs[p * n + k]!;
        s ^= s << 13;
        s ^= s >>> 17;
        s ^= s << 5;
        s >>>= 0;
        ram[s % ram.length] = (ram[s % ram.length]! + b + p + 1) & 0xff;
        this.scores[p] = (this.scores[p]! + b * (k + 1)) >>> 0;
        this.pageTracker?.mark(this.offsets[2]! + (s % ram.length));
      }
      this.pageTracker?.mark(this.offsets[3 + 2 * p]!, 4);
      this.pageTracker?.mark(this.offsets[4 + 2 * p]!, 4);
    }
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.rng[0] = s >>> 0;
    ram[this.clock[0]! % ram.length]! ^= 0x5a;
    this.pageTracker?.mark(this.offsets[2]! + (this.clock[0]! % ram.length));
    if (this.nondeterministic) {
      this.hidden++;
      ram[(this.hidden * 7) % ram.length]! ^= this.hidden & 0xff || 1;
      this.pageTracker?.mark(this.offsets[2]! + ((this.hidden * 7) % ram.length));
    }
    this.clock[0]!++;
    this.pageTracker?.mark(this.offsets[0]!, 4);
    this.pageTracker?.mark(this.offsets[1]!, 4);
  }

  saveInto(target: Uint8Array): number {
    return this.registry.saveInto(target);
  }

  load(state: Uint8Array): void {
    this.registry.load(state);
    this.pageTracker?.markAll();
  }

  checksum(): bigint {
    return this.registry.checksum();
  }

  reset(): void {
    this.clock[0] = 0;
    this.rng[0] = this.seed;
    this.positions.fill(0);
    this.scores.fill(0);
    this.ram.fill(0);
    this.inputs.fill(0);
    this.pageTracker?.markAll();
  }
}
