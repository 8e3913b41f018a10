import type { Remote } from './frame-advance-events.js';

/**
 * The delay a frame-advance peer's inputs get before every peer can have them: the largest
 * one-way estimate to any peer (or, equalized, the largest any peer reported), plus the extra
 * delay. Cached: it changes only with a ping sample, a peer's latency info or a new peer (set
 * {@link dirty}), so frames read the cached numbers instead of sorting the histories (and boxing
 * their results) every time. Read `delay` and `ownMaxMs` as fields after `if (dirty) refresh()`.
 */
export class DelayEstimate {
  /** Recompute before the next read. */
  dirty = true;
  /** The delay in ms (largest estimate, or the session's when equalized, + extra). */
  delay = 0.5;
  /** This peer's largest one-way estimate in ms (what it reports to the others). */
  ownMaxMs = 0.5;

  constructor(
    private readonly remotes: readonly Remote[],
    private readonly equalize: boolean,
    private readonly extraDelayMs: number,
  ) {}

  /** Recomputes {@link delay} and {@link ownMaxMs} from the remotes' ping histories. */
  refresh(): void {
    this.dirty = false;
    // One loop with both results stored here: a helper returning a fractional double would box it.
    let own = 0;
    let d = 0;
    for (let i = 0; i < this.remotes.length; i++) {
      const r = this.remotes[i]!;
      const oneWay = r.history.oneWayMs();
      own = Math.max(own, oneWay);
      d = Math.max(d, oneWay);
      if (this.equalize) d = Math.max(d, r.maxOneWay);
    }
    this.ownMaxMs = own;
    this.delay = d + this.extraDelayMs;
  }

  /**
   * The last frame an input made at `now` can no longer reach everyone in time for (frame k starts
   * at `startMs + k × frameMs`). Computed so that `now >= startMs + (bound + 1) * frameMs - delay`
   * never holds afterwards, the same expression the peer's wake-up uses (no float disagreement, no
   * zero-delay wake loop).
   */
  bound(now: number, startMs: number, frameMs: number): number {
    if (this.dirty) this.refresh();
    const d = this.delay;
    let b = Math.floor((now - startMs + d) / frameMs);
    while (startMs + (b + 1) * frameMs - d <= now) b++;
    return b;
  }
}
