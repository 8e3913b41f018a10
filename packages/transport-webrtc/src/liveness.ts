import type { Clock, Timeouts, Timer } from '@netplay/transport';
import { RttEstimator } from '@netplay/transport';
import type { MutableStats } from './channel-state.js';

/** What {@link Liveness} asks of its connection. */
export interface LivenessHost {
  /** Send a PING carrying `now` on the ping channel. */
  ping(now: number): void;
  /** The peer has been silent for `interruptMs`. */
  interrupted(silentMs: number): void;
  /** Traffic came back after `interrupted`. */
  resumed(interruptedMs: number): void;
  /** The peer has been silent for `disconnectMs`: close with `timeout`. */
  timedOut(silentMs: number): void;
  /** Whether the connection is still open (the timer stops otherwise). */
  open(): boolean;
}

/**
 * Keepalives, RTT, loss estimate and silence timeouts of an open connection: a PING every
 * `intervalMs`, `interrupted` after `interruptMs` without any received message, `resumed` on the
 * next one, `timedOut` after `disconnectMs`. RTT comes from PONGs (RFC 6298 through
 * `RttEstimator`). Loss: a PING without its PONG by the time of the next one counts as a lost round
 * trip; the smoothed round-trip loss `r` (over about 16 PINGs) gives the one-way estimate
 * `1 − √(1 − r)` (both directions assumed alike). PINGs sent while the peer is silent are not
 * counted (an outage is not loss).
 */
export class Liveness {
  private readonly rtt = new RttEstimator();
  private lastHeard: number;
  private interruptedSince = -1;
  private lastPing = Number.NEGATIVE_INFINITY;
  private pingOutstanding = false;
  private roundTripLoss = 0;
  private timer: Timer | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timeouts: Timeouts,
    private readonly intervalMs: number,
    private readonly stats: MutableStats,
    private readonly host: LivenessHost,
    /** PONGs echoing a time before this are forged and ignored. */
    private readonly createdAt: number,
  ) {
    this.lastHeard = createdAt;
  }

  /** The connection opened: start the timer. */
  start(): void {
    this.lastHeard = this.clock.now();
    this.tick();
  }

  /** Any message arrived from the peer. */
  heard(): void {
    const now = this.clock.now();
    this.lastHeard = now;
    if (this.interruptedSince >= 0) {
      const interruptedMs = now - this.interruptedSince;
      this.interruptedSince = -1;
      this.host.resumed(interruptedMs);
    }
  }

  /** A PONG echoing `sentAt` arrived. */
  pong(sentAt: number): void {
    const rtt = this.clock.now() - sentAt;
    if (!(rtt >= 0) || sentAt < this.createdAt) return;
    this.stats.pongsReceived++;
    if (sentAt === this.lastPing) this.pingOutstanding = false;
    this.rtt.sample(rtt);
    this.stats.rttMs = this.rtt.srtt;
    this.stats.rttVarMs = this.rtt.rttvar;
    this.stats.rttSamples = this.rtt.samples;
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    this.timer = undefined;
    if (!this.host.open()) return;
    const now = this.clock.now();
    const { interruptMs, disconnectMs } = this.timeouts;
    const silent = now - this.lastHeard;
    if (silent >= disconnectMs) {
      this.host.timedOut(silent);
      return;
    }
    if (silent >= interruptMs && this.interruptedSince < 0) {
      this.interruptedSince = this.lastHeard + interruptMs;
      this.host.interrupted(silent);
      if (!this.host.open()) return;
    }
    if (now - this.lastPing >= this.intervalMs) {
      if (this.stats.pingsSent > 0 && silent < interruptMs) {
        this.roundTripLoss += ((this.pingOutstanding ? 1 : 0) - this.roundTripLoss) / 16;
        this.stats.lossRate = 1 - Math.sqrt(1 - Math.min(1, Math.max(0, this.roundTripLoss)));
      }
      this.lastPing = now;
      this.pingOutstanding = true;
      this.stats.pingsSent++;
      this.host.ping(now);
      if (!this.host.open()) return;
    }
    let next = this.lastPing + this.intervalMs;
    if (this.interruptedSince < 0) next = Math.min(next, this.lastHeard + interruptMs);
    next = Math.min(next, this.lastHeard + disconnectMs);
    this.timer = this.clock.setTimer(Math.max(1, next - now), () => this.tick());
  }
}
