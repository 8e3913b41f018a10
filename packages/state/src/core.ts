import type { PageTracker } from './page-tracker.js';

/**
 * The contract between a netplay scheduler and an emulator core: the schedulers in
 * @netplay/lockstep and @netplay/rollback drive any `Core`, and @netplay/core-wasm's `WasmCore`
 * implements it for WebAssembly cores.
 *
 * A core is deterministic: its state after `advance()` depends only on its state before and the
 * inputs set for that frame. It never reads wall time or an unseeded random source.
 *
 * Inputs are fixed-size byte strings, one per port (player), set before each `advance()`.
 * The frame counter is part of the saved state: `load()` restores it.
 *
 * The usual implementation keeps its state in a `StateRegistry` and forwards `stateBytes`,
 * `saveInto`, `load` and `checksum` to it (see `ExampleGame` and `TestCore` in
 * `@netplay/state/testing`). Rollback keeps states in a `SnapshotRing` through
 * `(t) => core.saveInto(t)` and `(s) => core.load(s)`.
 */
export interface Core {
  /** The number of frames advanced since `reset()`, or the frame stored in the last loaded state. */
  readonly frame: number;
  /** How many input ports (players) the core reads. */
  readonly ports: number;
  /** The size in bytes of one port's input for one frame. */
  readonly inputBytes: number;
  /** The size in bytes of a savestate; `saveInto` needs a buffer at least this large. */
  readonly stateBytes: number;

  /**
   * Sets the input of one port for the next `advance()`. `input.length` must equal `inputBytes`.
   * The core copies the bytes; the caller may reuse the buffer.
   */
  setInput(port: number, input: Uint8Array): void;
  /** Runs one frame with the inputs set and increments `frame`. */
  advance(): void;
  /** Writes the savestate into `target` (allocating nothing) and returns the bytes written. */
  saveInto(target: Uint8Array): number;
  /** Restores a savestate written by `saveInto`, frame counter included. Throws on a bad state and changes nothing. */
  load(state: Uint8Array): void;
  /**
   * A 64-bit hash of the current state, for desync detection: equal states give equal hashes on
   * every peer (a `StateRegistry`-based core returns `hash64` of its snapshot).
   */
  checksum(): bigint;
  /** Returns the machine to its power-on state at frame 0 (inputs cleared). */
  reset(): void;
  /**
   * Optional: a core that knows which bytes of its savestate it writes marks them here (offsets
   * into what `saveInto` writes), so a late-join server can make a page delta from the pages
   * written since it saved its base (`DeltaBase.pageDelta(current, { dirty:
   * pageTracker.since(checkpoint) })`) instead of comparing the whole state. A core that cannot
   * tell leaves it undefined. `load()` and `reset()` must mark every page they change.
   */
  readonly pageTracker?: PageTracker;
}
