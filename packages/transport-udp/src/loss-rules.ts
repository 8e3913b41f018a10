import type { RttEstimator } from '@netplay/transport';
import { LossLedger } from './loss-ledger.js';

/** Later packets acknowledged before a packet may be declared lost by the ack rule. */
export const PACKET_THRESHOLD = 3;

/**
 * When a tracked packet counts as lost, and when such a loss was spurious.
 *
 * - Ack rule (QUIC-style packet and time thresholds): lost once {@link PACKET_THRESHOLD} later
 *   packets were acknowledged and it is overdue by the {@link reorderWindow} (9/8 SRTT + RTTVAR +
 *   one tick), so jitter that reorders a burst is not mistaken for loss.
 * - Spurious-loss undo (TCP RACK, RFC 8985, and Eifel, RFC 3522): an ack for a packet declared lost
 *   means it was only delayed; the reordering tolerance widens to how late it was (up to the
 *   largest RTO) and decays by 1/64 per loss, so one late burst does not slow loss recovery for good.
 *   The caller undoes the window cut that loss caused ({@link cutWasSpurious}).
 *
 * Fixed state: nothing is allocated per packet.
 * @internal
 */
export class LossRules {
  /** Packets declared lost, to recognise a spurious loss when its ack comes in after all. */
  private readonly lost = new LossLedger();
  /**
   * Extra reordering tolerance learnt from spurious losses, ms: a packet is declared lost by the
   * ack threshold only once it is overdue by more than this (it decays slowly back to 0).
   */
  private reorderMs = 0;

  constructor(
    private readonly rtt: RttEstimator,
    private readonly tickMs: number,
  ) {}

  /** After {@link scanSpurious}: whether the packet that last cut the window was among them. */
  get cutWasSpurious(): boolean {
    return this.lost.cutWasSpurious;
  }

  /**
   * How overdue a packet must be for the ack rule, ms (the RTO before any RTT sample), as of the
   * last {@link updateReorderWindow} (a field, not a return value: V8 may box a returned double).
   */
  reorderWindow = 0;

  /** Recomputes {@link reorderWindow} from the RTT and the learnt tolerance. */
  updateReorderWindow(): void {
    this.reorderWindow =
      this.rtt.samples === 0
        ? this.rtt.rto()
        : Math.max(1.125 * this.rtt.srtt + this.rtt.rttvar + this.tickMs, this.reorderMs);
  }

  /** Packet `seq`, sent at `sentAt`, was declared lost (by the ack rule or its RTO). */
  onLost(seq: number, sentAt: number): void {
    this.lost.record(seq, sentAt);
    this.reorderMs -= this.reorderMs / 64;
  }

  /**
   * Looks for packets declared lost among those an ack (`ack` and the bitfield at `d[bitsAt ..]`)
   * says arrived: returns how many (then call {@link widen}).
   */
  scanSpurious(ack: number, d: Uint8Array, bitsAt: number, bitBytes: number, cutSeq: number): number {
    return this.lost.scan(ack, d, bitsAt, bitBytes, cutSeq);
  }

  /** After spurious losses, at `now`: widens the reordering tolerance to how late they were. */
  widen(now: number): void {
    const late = 1.125 * (now - this.lost.oldestSentAt);
    this.reorderMs = Math.min(Math.max(this.reorderMs, late), this.rtt.maxRtoMs);
  }
}
