import { StateError } from './errors.js';

/** Writes a state into `target` and returns how many bytes it wrote (e.g. `Core.saveInto`, `StateRegistry.saveInto`). */
export type StateSaver = (target: Uint8Array) => number;
/** Restores a state from exactly the bytes a saver wrote (e.g. `Core.load`, `StateRegistry.load`). */
export type StateLoader = (state: Uint8Array) => void;

/**
 * N preallocated snapshot slots keyed by frame, for rollback: save frame f, load frame f, drop
 * frames older (or newer) than f. All memory is allocated by the constructor; saving and loading
 * allocate nothing as long as the saver writes the same number of bytes each time (a view of
 * each slot's used bytes is cached and remade only when that number changes).
 *
 * When all slots are taken, saving a new frame evicts the oldest (smallest) frame. Saving a
 * frame that is already stored overwrites it in place.
 */
export class SnapshotRing {
  private readonly slots: Uint8Array[];
  private readonly views: Uint8Array[];
  private readonly frameOf: Float64Array;
  private readonly used: Uint8Array;
  private count = 0;

  /**
   * @param capacity the number of slots (at least 1).
   * @param slotBytes the size of each slot: at least the largest state a saver writes
   *   (`Core.stateBytes`, `StateRegistry.snapshotBytes`).
   */
  constructor(
    readonly capacity: number,
    readonly slotBytes: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new StateError('bad-argument', `ring capacity must be a positive integer, got ${capacity}`);
    if (!Number.isInteger(slotBytes) || slotBytes < 0)
      throw new StateError('bad-argument', `slot size must be a non-negative integer, got ${slotBytes}`);
    // One buffer for all slots keeps them contiguous.
    const all = new Uint8Array(capacity * slotBytes);
    this.slots = Array.from({ length: capacity }, (_, i) => all.subarray(i * slotBytes, (i + 1) * slotBytes));
    this.views = this.slots.slice();
    this.frameOf = new Float64Array(capacity);
    this.used = new Uint8Array(capacity);
  }

  /** How many frames are stored. */
  get size(): number {
    return this.count;
  }

  /**
   * Stores the state of `frame`, written by `saver` into a slot: the slot already holding
   * `frame`, else a free slot, else the slot of the oldest frame.
   * @returns the stored bytes (a view into the ring, valid until that slot is reused).
   * @throws StateError `bad-argument` for a frame that is not a safe integer or a saver that
   *   reports more bytes than a slot holds; the slot is then left empty.
   */
  save(frame: number, saver: StateSaver): Uint8Array {
    if (!Number.isSafeInteger(frame))
      throw new StateError('bad-argument', `frame must be a safe integer, got ${frame}`);
    let slot = this.indexOf(frame);
    if (slot < 0) {
      slot = this.used.indexOf(0);
      if (slot < 0) slot = this.oldestSlot();
      else this.count++;
    }
    this.used[slot] = 1;
    this.frameOf[slot] = frame;
    let n: number;
    try {
      n = saver(this.slots[slot]!);
    } catch (e) {
      this.free(slot);
      throw e;
    }
    if (!Number.isInteger(n) || n < 0 || n > this.slotBytes) {
      this.free(slot);
      throw new StateError('bad-argument', `saver reported ${n} bytes, a slot holds ${this.slotBytes}`);
    }
    let view = this.views[slot]!;
    if (view.length !== n) {
      view = this.slots[slot]!.subarray(0, n);
      this.views[slot] = view;
    }
    return view;
  }

  /** True if `frame` is stored. */
  has(frame: number): boolean {
    return this.indexOf(frame) >= 0;
  }

  /** The stored bytes of `frame` (a view into the ring), or undefined. */
  get(frame: number): Uint8Array | undefined {
    const slot = this.indexOf(frame);
    return slot < 0 ? undefined : this.views[slot];
  }

  /**
   * Hands the stored bytes of `frame` to `loader` (e.g. `(s) => core.load(s)`).
   * @returns false, without calling `loader`, when `frame` is not stored.
   */
  load(frame: number, loader: StateLoader): boolean {
    const slot = this.indexOf(frame);
    if (slot < 0) return false;
    loader(this.views[slot]!);
    return true;
  }

  /** Drops every frame older than `frame`; returns how many were dropped. */
  dropBefore(frame: number): number {
    let dropped = 0;
    for (let i = 0; i < this.capacity; i++) {
      if (this.used[i] === 1 && this.frameOf[i]! < frame) {
        this.free(i);
        dropped++;
      }
    }
    return dropped;
  }

  /** Drops every frame newer than `frame` (after a rollback to it); returns how many were dropped. */
  dropAfter(frame: number): number {
    let dropped = 0;
    for (let i = 0; i < this.capacity; i++) {
      if (this.used[i] === 1 && this.frameOf[i]! > frame) {
        this.free(i);
        dropped++;
      }
    }
    return dropped;
  }

  /** Drops everything. */
  clear(): void {
    this.used.fill(0);
    this.count = 0;
  }

  /** The oldest stored frame, or undefined when empty. */
  get oldestFrame(): number | undefined {
    const s = this.oldestSlot();
    return s < 0 ? undefined : this.frameOf[s];
  }

  /** The newest stored frame, or undefined when empty. */
  get newestFrame(): number | undefined {
    let best = -1;
    for (let i = 0; i < this.capacity; i++) {
      if (this.used[i] === 1 && (best < 0 || this.frameOf[i]! > this.frameOf[best]!)) best = i;
    }
    return best < 0 ? undefined : this.frameOf[best];
  }

  /** The stored frames in ascending order (allocates; for inspection and tests). */
  frames(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.capacity; i++) if (this.used[i] === 1) out.push(this.frameOf[i]!);
    return out.sort((a, b) => a - b);
  }

  private indexOf(frame: number): number {
    for (let i = 0; i < this.capacity; i++) if (this.used[i] === 1 && this.frameOf[i] === frame) return i;
    return -1;
  }

  private oldestSlot(): number {
    let best = -1;
    for (let i = 0; i < this.capacity; i++) {
      if (this.used[i] === 1 && (best < 0 || this.frameOf[i]! < this.frameOf[best]!)) best = i;
    }
    return best;
  }

  private free(slot: number): void {
    if (this.used[slot] === 1) {
      this.used[slot] = 0;
      this.count--;
    }
  }
}
