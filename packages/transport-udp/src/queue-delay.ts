/** How many recent RTT samples {@link QueueDelayFilter} takes the minimum of. */
export const QUEUE_FILTER_SAMPLES = 16;

/**
 * The delay half of congestion control: tells a queue building on the path from noise in the RTT.
 *
 * A single RTT sample above the smallest one says nothing: random per-packet delay (jitter, an
 * event-loop stall on a loaded machine) lifts some samples and not others. A queue lifts them all.
 * So, as LEDBAT's "current delay" filter and BBR's windowed minimum do, the queue is judged on the
 * smallest of the last {@link QUEUE_FILTER_SAMPLES} samples against the base (the smallest RTT
 * seen): only when even the best recent sample is well above the base is a queue building. The
 * ring is preallocated: sampling allocates nothing.
 */
export class QueueDelayFilter {
  /** The smallest RTT seen, ms (the path's propagation delay as far as we can tell). */
  base = Number.POSITIVE_INFINITY;
  private readonly ring = new Float64Array(QUEUE_FILTER_SAMPLES);
  private count = 0;
  private next = 0;

  /** Adds an RTT sample (ms). */
  sample(rtt: number): void {
    if (rtt < this.base) this.base = rtt;
    this.ring[this.next] = rtt;
    this.next = (this.next + 1) % QUEUE_FILTER_SAMPLES;
    if (this.count < QUEUE_FILTER_SAMPLES) this.count++;
  }

  /** The smallest of the recent samples (ms), +∞ before the first. */
  recentMin(): number {
    let m = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.count; i++) if (this.ring[i]! < m) m = this.ring[i]!;
    return m;
  }

  /**
   * Whether a queue is building: a full window of recent samples whose smallest is above
   * 2 × base + `slackMs`.
   */
  queueBuilding(slackMs: number): boolean {
    return this.count === QUEUE_FILTER_SAMPLES && this.recentMin() > 2 * this.base + slackMs;
  }
}
