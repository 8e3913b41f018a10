import type { UdpConfig } from './config.js';
import type { UdpPeerCounters } from './peer-io.js';
import { QueueDelayFilter } from './queue-delay.js';

/**
 * The congestion window of a UDP peer: how many reliable bytes may be in flight. Slow start below
 * 1 MiB, then about one datagram per window; cut by 30 % on a loss (at most once per RTT, undone if
 * the loss proves spurious) and by 20 % when the RTT says a queue is building (delay-based: no
 * growth meanwhile), never below `minWindowBytes` nor above `maxWindowBytes`. Keeps
 * `counters.windowBytes` equal to {@link bytes}. Allocates nothing.
 * @internal
 */
export class CongestionWindow {
  /** The window, bytes. */
  bytes: number;
  /** Whether the last RTT samples say a queue is building on the path. */
  queueBuilding = false;
  /** The packet whose loss last cut the window (0: none, or undone): the ledger checks it. */
  cutSeq = 0;
  private lastCut = -1e9;
  private beforeCut = 0;
  /** Base and recent RTTs, for the delay-based congestion signal. */
  private readonly delay = new QueueDelayFilter();

  constructor(
    private readonly config: UdpConfig,
    private readonly counters: UdpPeerCounters,
  ) {
    this.bytes = config.initialWindowBytes;
    counters.windowBytes = this.bytes;
  }

  /**
   * The delay-based half of congestion control, on each RTT sample: when the RTT climbs well above
   * the smallest seen, a queue is building somewhere (a bulk transfer filling a link), so the window
   * shrinks and inputs do not wait behind it.
   */
  onRttSample(rtt: number, now: number, srtt: number): void {
    this.delay.sample(rtt);
    // Judged on the smallest recent sample, not the last one: jitter lifts some samples, a queue
    // lifts them all (see QueueDelayFilter).
    this.queueBuilding = this.delay.queueBuilding(10);
    if (this.queueBuilding && now - this.lastCut > Math.max(srtt, 1)) {
      this.lastCut = now;
      this.bytes = Math.max(this.config.minWindowBytes, Math.floor(this.bytes * 0.8));
      this.counters.windowBytes = this.bytes;
    }
  }

  /** A fragment of `bytes` was acknowledged: slow start below 1 MiB, then about one datagram per window. */
  onAcked(bytes: number): void {
    // No growth while the RTT says a queue is building.
    if (!this.queueBuilding) {
      this.bytes += this.bytes < 1 << 20 ? bytes : Math.ceil((bytes * this.config.mtu) / this.bytes);
    }
    if (this.bytes > this.config.maxWindowBytes) this.bytes = this.config.maxWindowBytes;
    this.counters.windowBytes = this.bytes;
  }

  /** Packet `seq`, which carried reliable data, was declared lost: cut, at most once per RTT. */
  onLoss(seq: number, now: number, srtt: number): void {
    if (now - this.lastCut > Math.max(srtt, 1)) {
      this.lastCut = now;
      this.cutSeq = seq;
      this.beforeCut = this.bytes;
      this.bytes = Math.max(this.config.minWindowBytes, Math.floor(this.bytes * 0.7));
      this.counters.windowBytes = this.bytes;
    }
  }

  /** The loss that caused the last cut was spurious: restore the window from before it. */
  undoCut(): void {
    if (this.beforeCut > this.bytes) {
      this.bytes = this.beforeCut;
      this.counters.windowBytes = this.bytes;
      this.cutSeq = 0;
    }
  }
}
