/** A scheduled callback; `cancel()` stops it from running (harmless after it ran). */
export interface Timer {
  /** Stops the callback from running (harmless after it ran). */
  cancel(): void;
}

/**
 * Time as seen by sans-I/O code. Library, transport-core and scheduler code reads time only
 * through a `Clock`, so tests can drive it with a {@link ManualClock} (virtual time) and
 * production code with {@link SystemClock} (the one place wall time is read).
 */
export interface Clock {
  /** Milliseconds on a monotonic time line (fractions allowed). Never goes backwards. */
  now(): number;
  /**
   * Runs `callback` once, `delayMs` milliseconds from now (negative or NaN delays count as 0).
   * Callbacks due at the same time run in the order they were scheduled.
   */
  setTimer(delayMs: number, callback: () => void): Timer;
}

interface Entry extends Timer {
  at: number;
  seq: number;
  callback: (() => void) | undefined;
}

/**
 * A virtual clock: time moves only when {@link advance}, {@link advanceTo} or {@link runUntil} is
 * called, and timers fire during those calls, in time order (ties in scheduling order), each seeing
 * `now()` equal to its due time. Fully deterministic.
 */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private readonly heap: Entry[] = [];
  /** Timers fired so far (for tests and loop guards). */
  fired = 0;

  constructor(
    startMs = 0,
    /** Upper bound on timers fired by one advance/runUntil call, to catch runaway zero-delay loops. */
    readonly maxTimersPerCall = 50_000_000,
  ) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const d = Number.isNaN(delayMs) ? 0 : Math.max(0, delayMs);
    const entry: Entry = {
      at: this.time + d,
      seq: this.seq++,
      callback,
      cancel() {
        entry.callback = undefined;
      },
    };
    this.push(entry);
    return entry;
  }

  /** Number of timers scheduled and not yet fired or cancelled. */
  get pending(): number {
    let n = 0;
    for (const e of this.heap) if (e.callback) n++;
    return n;
  }

  /** Due time of the next live timer, or `undefined` when none is scheduled. */
  nextTimerAt(): number | undefined {
    this.dropCancelled();
    return this.heap[0]?.at;
  }

  /** Moves time forward by `ms`, firing every timer due up to and including the new time. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advance(${ms}): ms must be a non-negative number`);
    this.advanceTo(this.time + ms);
  }

  /** Moves time forward to `target` (no-op if it is in the past), firing due timers on the way. */
  advanceTo(target: number): void {
    let budget = this.maxTimersPerCall;
    for (;;) {
      this.dropCancelled();
      const top = this.heap[0];
      if (!top || top.at > target) break;
      this.fireTop();
      if (--budget <= 0) throw new Error('ManualClock: too many timers in one call (runaway loop?)');
    }
    if (target > this.time) this.time = target;
  }

  /**
   * Fires timers one at a time until `predicate()` holds or `maxMs` of virtual time have passed.
   * Time jumps straight to each timer, so idle stretches cost nothing.
   * @returns whether the predicate holds at the end.
   */
  runUntil(predicate: () => boolean, maxMs: number): boolean {
    const limit = this.time + maxMs;
    let budget = this.maxTimersPerCall;
    while (!predicate()) {
      this.dropCancelled();
      const top = this.heap[0];
      if (!top || top.at > limit) {
        this.time = Math.max(this.time, limit);
        return predicate();
      }
      this.fireTop();
      if (--budget <= 0) throw new Error('ManualClock: too many timers in one call (runaway loop?)');
    }
    return true;
  }

  private fireTop(): void {
    const e = this.pop()!;
    if (e.at > this.time) this.time = e.at;
    const cb = e.callback;
    e.callback = undefined;
    this.fired++;
    cb?.();
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && this.heap[0]!.callback === undefined) this.pop();
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
