import type { Clock, Timer } from '@netplay/transport';

class Slot implements Timer {
  at = 0;
  seq = 0;
  callback: (() => void) | undefined;
  constructor(
    private readonly clock: ReusingClock,
    readonly pooled: boolean,
  ) {}
  cancel(): void {
    if (this.callback === undefined) {
      // A pooled slot may already serve another timer: cancelling it through an old handle would
      // cancel that one. The steady-state tests rely on the peers never doing so.
      if (this.pooled) this.clock.staleCancels++;
      return;
    }
    this.callback = undefined;
    this.clock.release(this);
  }
}

/**
 * A virtual clock for allocation tests: once {@link reuse} is set, timers are served from a fixed
 * set of reused records, so the clock itself allocates nothing per timer (a `ManualClock` allocates
 * a record per timer, which would count against the code under test). Records made before `reuse`
 * was set are never reused. Cancelling a reused record that is not pending is counted in
 * {@link staleCancels} (it would be a bug in a caller of this clock, not in a normal clock).
 */
export class ReusingClock implements Clock {
  private time = 0;
  private seq = 0;
  // Arrays with explicit counts: shrinking an array's length can make V8 trim its storage, which
  // the next push allocates again.
  private readonly pending: Array<Slot | undefined> = [];
  private pendingCount = 0;
  private readonly free: Slot[] = [];
  private freeCount = 0;
  /** Serve timers from reused records from now on. */
  reuse = false;
  staleCancels = 0;

  constructor(slots = 16) {
    for (let i = 0; i < slots; i++) {
      this.free.push(new Slot(this, true));
      this.pending.push(undefined);
    }
    this.freeCount = slots;
  }

  now(): number {
    return this.time;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    let s: Slot;
    if (this.reuse) {
      if (this.freeCount === 0) throw new Error('ReusingClock: out of timer records');
      s = this.free[--this.freeCount]!;
    } else s = new Slot(this, false);
    s.at = this.time + Math.max(0, delayMs || 0);
    s.seq = this.seq++;
    s.callback = callback;
    if (this.pendingCount === this.pending.length) this.pending.push(undefined);
    this.pending[this.pendingCount++] = s;
    return s;
  }

  /** @internal */
  release(s: Slot): void {
    for (let i = 0; i < this.pendingCount; i++) {
      if (this.pending[i] !== s) continue;
      // Swap-remove: pending is unordered.
      this.pending[i] = this.pending[--this.pendingCount];
      this.pending[this.pendingCount] = undefined;
      break;
    }
    if (s.pooled) this.free[this.freeCount++] = s;
  }

  /** Moves time forward by `ms`, firing due timers in time order (ties in scheduling order). */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let next: Slot | undefined;
      for (let i = 0; i < this.pendingCount; i++) {
        const s = this.pending[i]!;
        if (s.at <= target && (!next || s.at < next.at || (s.at === next.at && s.seq < next.seq))) next = s;
      }
      if (!next) break;
      if (next.at > this.time) this.time = next.at;
      const cb = next.callback!;
      next.callback = undefined;
      this.release(next);
      cb();
    }
    this.time = target;
  }
}
