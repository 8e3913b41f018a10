import { DeltaBase, type DirtyPageSet } from '@netplay/state';

/**
 * The page deltas a late-join server sends (issue 16): against the power-on state, made with
 * @netplay/state's {@link DeltaBase}, which hashes the base's pages once (on the first delta) and
 * then reads only the pages that may differ: with a dirty-page set (the core's `pageTracker`, passed
 * by the runner), only those; without one, every page is compared with the base, but neither state
 * is hashed whole. Deflated (pako); `applyDelta` reads it (delta format version 2).
 */
export class LateJoinDelta {
  private base: DeltaBase | undefined;
  private bytes: Uint8Array | undefined;

  constructor(
    private readonly layoutHash: bigint,
    private readonly pageSize: number,
  ) {}

  /** The power-on state the deltas are made against (kept by reference: leave it unchanged). */
  setBase(initial: Uint8Array): void {
    if (this.bytes === initial) return;
    this.bytes = initial;
    this.base = undefined;
  }

  /** Whether {@link setBase} was called. */
  get hasBase(): boolean {
    return this.bytes !== undefined;
  }

  /**
   * The delta rebuilding `state` from the base. `dirty` (pages written since the base was saved)
   * is used when its page size is the delta's; otherwise every page is compared.
   */
  delta(state: Uint8Array, dirty?: DirtyPageSet): Uint8Array {
    if (this.bytes === undefined) throw new Error('LateJoinDelta: no base');
    this.base ??= new DeltaBase(this.bytes, { layoutHash: this.layoutHash, pageSize: this.pageSize });
    return this.base.pageDelta(state, dirty !== undefined && dirty.pageSize === this.pageSize ? { dirty } : {});
  }
}
