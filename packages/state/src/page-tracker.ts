import { DeltaError } from './errors.js';

/**
 * Which pages of a state may differ from a base: pages for which `mayDiffer` is false are
 * promised to hold the base's bytes, so a page delta does not even read them. A set that misses a
 * change makes a delta that rebuilds the base's bytes for that page: it must cover every change.
 */
export interface DirtyPageSet {
  /** The page size the indexes refer to (must equal the delta's page size). */
  readonly pageSize: number;
  /** False only when page `page` is known to hold the base's bytes. */
  mayDiffer(page: number): boolean;
}

/**
 * Dirty-page tracking with generation counters, over the bytes of a savestate (offsets into what
 * `Core.saveInto` / `StateRegistry.saveInto` writes). Whoever changes the state (a core's memory
 * writes, a game writing through its registered arrays) calls {@link mark}; whoever keeps a base
 * (a late-join server) takes a {@link checkpoint} when it saves the base and later asks
 * {@link since} which pages were written after it. Any number of bases can be tracked at once,
 * each with its own checkpoint. Marking costs one array store per page touched; no allocation.
 *
 * ```ts
 * const tracker = new PageTracker(core.stateBytes);   // 4 KiB pages
 * core.saveInto(initial); const mark = tracker.checkpoint();
 * // ... the core calls tracker.mark(offset, length) for what it writes ...
 * const delta = base.pageDelta(current, { dirty: tracker.since(mark) });
 * ```
 */
export class PageTracker {
  /** The page size, a power of two from 256 to 1 MiB. */
  readonly pageSize: number;
  /** The state size in bytes the tracker covers. */
  readonly stateBytes: number;
  private readonly shift: number;
  private readonly stamps: Float64Array;
  private gen = 1;

  constructor(stateBytes: number, pageSize = 4096) {
    const shift = Math.log2(pageSize);
    if (!Number.isInteger(shift) || shift < 8 || shift > 20)
      throw new DeltaError('bad-argument', `page size must be a power of two from 256 to 1 MiB, got ${pageSize}`);
    if (!Number.isInteger(stateBytes) || stateBytes < 0 || stateBytes > 0xffff_ffff)
      throw new DeltaError('bad-argument', `state size must be an integer 0..2^32-1, got ${stateBytes}`);
    this.pageSize = pageSize;
    this.stateBytes = stateBytes;
    this.shift = shift;
    // Every page starts written in generation 1, after checkpoint 0: with no checkpoint taken,
    // everything may differ.
    this.stamps = new Float64Array(Math.ceil(stateBytes / pageSize)).fill(1);
  }

  /** The number of pages tracked. */
  get pages(): number {
    return this.stamps.length;
  }

  /** The current generation: marks made now are stamped with it. */
  get generation(): number {
    return this.gen;
  }

  /**
   * Records that bytes `[byteOffset, byteOffset + byteLength)` of the state were (or may have
   * been) written. Ranges past the state's end are clipped. No allocation.
   */
  mark(byteOffset: number, byteLength = 1): void {
    if (!(byteLength > 0)) return;
    const start = Math.max(0, byteOffset);
    const end = Math.min(this.stateBytes, byteOffset + byteLength);
    if (!(end > start)) return;
    const stamps = this.stamps;
    const gen = this.gen;
    for (let p = start >>> this.shift, last = (end - 1) >>> this.shift; p <= last; p++) stamps[p] = gen;
  }

  /** Records that page `page` was written. */
  markPage(page: number): void {
    if (page >= 0 && page < this.stamps.length) this.stamps[page] = this.gen;
  }

  /** Records that every page may have changed (after a `load()`, a reset, or writes it cannot see). */
  markAll(): void {
    this.stamps.fill(this.gen);
  }

  /**
   * Starts a new generation and returns a checkpoint: {@link since} of it lists every page marked
   * after this call. Take it right when you save a base.
   */
  checkpoint(): number {
    // Generations are doubles: 2^53 checkpoints before they could run out.
    return this.gen++;
  }

  /** True when page `page` was marked after `checkpoint` (pages past the state are always dirty). */
  markedSince(checkpoint: number, page: number): boolean {
    return page >= this.stamps.length || this.stamps[page]! > checkpoint;
  }

  /** The number of pages marked after `checkpoint`. */
  countSince(checkpoint: number): number {
    let n = 0;
    for (let p = 0; p < this.stamps.length; p++) if (this.stamps[p]! > checkpoint) n++;
    return n;
  }

  /** The pages marked after `checkpoint`, as a {@link DirtyPageSet} for a page delta. */
  since(checkpoint: number): DirtyPageSet {
    return { pageSize: this.pageSize, mayDiffer: (page) => this.markedSince(checkpoint, page) };
  }
}
