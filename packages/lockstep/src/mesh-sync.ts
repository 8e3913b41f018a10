import type { DirtyPageSet } from '@netplay/state';
import { LateJoinDelta } from './late-join-delta.js';

/**
 * A mesh peer's states for late joiners: the power-on state (frame 0) and, every
 * `syncIntervalFrames`, a sync block (stored by the runner through the `StatefulScheduler` hooks),
 * and the page deltas of a sync block against the power-on state (`LateJoinDelta`).
 */
export class MeshSyncBlocks {
  /** The power-on state (frame 0), once stored. */
  initialState: Uint8Array | undefined;
  /** The frame of the last sync block (-1: none yet). */
  syncFrame = -1;
  private syncState: Uint8Array | undefined;
  private syncDirty: DirtyPageSet | undefined;
  /** Late joiners' page deltas against the power-on state (issue 16: `DeltaBase`, dirty pages). */
  private readonly deltas: LateJoinDelta;
  /** The last frame stored. */
  lastStored = -1;

  constructor(
    private readonly interval: number,
    layoutHash: bigint,
    pageSize: number,
  ) {
    this.deltas = new LateJoinDelta(layoutHash, pageSize);
  }

  /** Whether the state at the start of `frame` is wanted (`member`: sync blocks are kept by members only). */
  wants(frame: number, member: boolean): boolean {
    if (frame <= this.lastStored) return false;
    return (frame === 0 && this.initialState === undefined) || (member && frame % this.interval === 0);
  }

  /** Stores the state at the start of `frame` (see {@link wants}). */
  store(frame: number, state: Uint8Array, member: boolean, dirty?: DirtyPageSet): void {
    this.lastStored = frame;
    if (frame === 0 && this.initialState === undefined) {
      this.initialState = state;
      this.deltas.setBase(state);
    }
    if (member && frame % this.interval === 0) {
      this.syncFrame = frame;
      this.syncState = state;
      // The pages written since the base: a live set, so a later delta reads a superset (still right).
      this.syncDirty = dirty;
    }
  }

  /** The page delta of the last sync block against the power-on state. */
  delta(): Uint8Array {
    return this.deltas.delta(this.syncState!, this.syncDirty);
  }
}
