import type { Clock, MutableConnectionStats, RttEstimator } from '@netplay/transport';
import type { CongestionWindow } from './congestion-window.js';
import type { InFlightPackets } from './in-flight.js';
import { type LossRules, PACKET_THRESHOLD } from './loss-rules.js';
import type { UdpPeerCounters } from './peer-io.js';
import type { SendQueues } from './send-queues.js';
import type { SentPacket } from './sent-packet.js';
import { ACK_BITS, resolve16, u16 } from './wire.js';

/** What an ack did (see {@link IncomingAcks.process}). */
export const AckResult = {
  /** Nothing in flight was acknowledged. */
  None: 0,
  /** Packets were acknowledged: the RTT, the window and the queues moved. */
  Progress: 1,
  /** Our Close was acknowledged while lingering: the connection is done. */
  CloseAcked: 2,
} as const;
export type AckResult = (typeof AckResult)[keyof typeof AckResult];

/**
 * The sending side of acknowledgement: what the peer's acks (and their absence) say about the
 * tracked packets we sent. An ack samples the RTT (its delay field taken off), retires the packets
 * it covers, and declares lost those {@link LossRules} says are; spurious losses widen the
 * tolerance and undo their window cut. A packet unacknowledged for an RFC 6298 RTO (plus two
 * ticks, for the peer's delayed ack) is lost too, and each such expiry doubles the RTO (up to 8×)
 * until an ack makes progress. Lost fragments go back to {@link SendQueues} to be resent.
 * Allocation-free.
 * @internal
 */
export class IncomingAcks {
  private rtoBackoff = 1;
  // The ack fields {@link read} found (fields, not an object per packet).
  private ack = 0;
  private delay = 0;
  private bitsAt = 0;
  private bitBytes = 0;
  private lastSent = 0;

  constructor(
    private readonly clock: Clock,
    private readonly tickMs: number,
    private readonly rtt: RttEstimator,
    private readonly window: CongestionWindow,
    private readonly loss: LossRules,
    private readonly inFlight: InFlightPackets,
    private readonly queues: SendQueues,
    private readonly counters: UdpPeerCounters,
    private readonly stats: MutableConnectionStats,
  ) {}

  /**
   * Reads the ack fields of a DATA packet at `d[o]` (before `end`): the acknowledged sequence number
   * (16 bits, near `lastSent`, the last one we sent), the ack delay (varint, 0.1 ms) and the trimmed
   * bitfield. Returns the offset after them, or −1 if they are malformed.
   */
  read(d: Uint8Array, o: number, end: number, lastSent: number): number {
    this.ack = 0;
    if (o + 2 > end) return -1;
    const ack = resolve16(u16(d, o), lastSent);
    o += 2;
    let delay = 0;
    let shift = 0;
    for (;;) {
      if (o >= end || shift > 14) return -1;
      const byte = d[o++]!;
      delay += (byte & 0x7f) << shift;
      shift += 7;
      if (byte < 0x80) break;
    }
    if (o >= end) return -1;
    const bitBytes = d[o++]!;
    const bitsAt = o;
    o += bitBytes;
    if (bitBytes > ACK_BITS / 8 || o > end) return -1;
    this.ack = ack;
    this.delay = delay;
    this.bitsAt = bitsAt;
    this.bitBytes = bitBytes;
    this.lastSent = lastSent;
    return o;
  }

  /**
   * Acts on the ack {@link read} found in `d`, if it acknowledges a packet we sent. `lingering`: our
   * Close is waiting for its ack. (No time or double is passed in: V8 may box those.)
   */
  process(d: Uint8Array, lingering: boolean): AckResult {
    const ack = this.ack;
    const bitsAt = this.bitsAt;
    const bitBytes = this.bitBytes;
    if (ack === 0 || ack > this.lastSent || this.inFlight.count === 0) return AckResult.None;
    const now = this.clock.now();
    const ackDelayMs = this.delay / 10;
    // Sample the RTT from the newest acknowledged packet first, so the loss threshold below uses it.
    const newest = this.inFlight.live(ack);
    if (newest) {
      const rtt = Math.max(0, now - newest.sentAt - ackDelayMs);
      this.rtt.sample(rtt);
      this.window.onRttSample(rtt, now, this.rtt.srtt);
    }
    const spurious = this.loss.scanSpurious(ack, d, bitsAt, bitBytes, this.window.cutSeq);
    if (spurious > 0) {
      // Delayed or reordered, not lost: jitter alone never shrinks the window.
      this.counters.spuriousLosses += spurious;
      this.loss.widen(now);
      if (this.loss.cutWasSpurious) this.window.undoCut();
    }
    this.loss.updateReorderWindow();
    const reorderWindow = this.loss.reorderWindow;
    let any = false;
    const end = Math.min(this.inFlight.length, ack - this.inFlight.base + 1);
    for (let i = 0; i < end; i++) {
      const p = this.inFlight.at(i);
      if (!p.live) continue;
      const back = ack - p.seq;
      const acked =
        back === 0 || (back <= bitBytes * 8 && (d[bitsAt + ((back - 1) >> 3)]! & (1 << ((back - 1) & 7))) !== 0);
      if (acked) {
        this.inFlight.retire(p);
        this.stats.lossRate += (0 - this.stats.lossRate) / 32;
        if (p.close && lingering) return AckResult.CloseAcked;
        if (p.fragCount > 0) this.queues.acked(p);
        any = true;
      } else if (back >= PACKET_THRESHOLD && now - p.sentAt > reorderWindow) {
        // The ack rule (see LossRules).
        this.inFlight.retire(p);
        this.lost(p);
      }
    }
    this.inFlight.trim();
    if (!any) return AckResult.None;
    this.rtoBackoff = 1;
    this.stats.rttMs = this.rtt.srtt;
    this.stats.rttVarMs = this.rtt.rttvar;
    this.stats.rttSamples = this.rtt.samples;
    return AckResult.Progress;
  }

  /** Retransmission timeouts, now: the oldest packets first. */
  expire(): void {
    const now = this.clock.now();
    // The peer may hold an ack back for up to one tick (plus timer slack): allow for it, as QUIC's
    // PTO adds max_ack_delay.
    const rto = (this.rtt.rto() + 2 * this.tickMs) * this.rtoBackoff;
    let expired = false;
    for (let i = 0; i < this.inFlight.length; i++) {
      const p = this.inFlight.at(i);
      if (!p.live) continue;
      if (now - p.sentAt < rto) break;
      this.inFlight.retire(p);
      this.lost(p);
      expired = true;
    }
    this.inFlight.trim();
    if (expired) this.rtoBackoff = Math.min(8, this.rtoBackoff * 2);
  }

  /** Packet `p` (out of flight already) is lost. */
  private lost(p: SentPacket): void {
    this.counters.packetsLost++;
    this.stats.lossRate += (1 - this.stats.lossRate) / 32;
    this.loss.onLost(p.seq, p.sentAt);
    if (p.fragCount === 0) return;
    this.window.onLoss(p.seq, this.clock.now(), this.rtt.srtt);
    this.queues.lost(p);
  }
}
