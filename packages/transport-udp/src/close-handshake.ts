import { encodeCloseReason, type RttEstimator } from '@netplay/transport';
import { FrameType } from './wire.js';

/** Close frames sent before the peer is given up on. */
const CLOSE_ATTEMPTS = 5;

/**
 * Both halves of the close handshake of a UDP peer. Ours: after `close()` the peer lingers; its
 * Close (with the reason) goes out once every reliable message is acknowledged (at once after a
 * flood), again after each RTO, and {@link CLOSE_ATTEMPTS} unanswered ones end the connection.
 * Theirs: a Close is answered with a CloseAck.
 * @internal
 */
export class CloseHandshake {
  /** Our Close is queued: the connection lingers until it is acknowledged (or given up). */
  lingering = false;
  /** Closing after a flood: the Close goes out without waiting for the send queue. */
  abandon = false;
  /** The peer's Close is to be acknowledged. */
  ackDue = false;
  private reason: Uint8Array | undefined;
  private sentCount = 0;
  private sentAt = -1e9;

  constructor(private readonly rtt: RttEstimator) {}

  /** Starts lingering with `reason` to send. */
  start(reason: string): void {
    this.reason = encodeCloseReason(reason);
    this.lingering = true;
  }

  /** Whether our Close went out at least once. */
  get sent(): boolean {
    return this.sentCount > 0;
  }

  /** Writes the CloseAck at `buf[o]` if one is due; returns the new offset. */
  writeAck(buf: Uint8Array, o: number): number {
    if (!this.ackDue) return o;
    buf[o++] = FrameType.CloseAck << 4;
    this.ackDue = false;
    return o;
  }

  /**
   * Writes our Close at `buf[o]` if it is due and fits before `limit` (`queueEmpty`: every reliable
   * message is acknowledged). Returns the new offset (`o` if none went), or −1 when the attempts
   * are used up: the connection should die.
   */
  write(buf: Uint8Array, o: number, limit: number, now: number, queueEmpty: boolean): number {
    const reason = this.reason;
    if (!this.lingering || !(queueEmpty || this.abandon) || !reason || o + 2 + reason.length > limit) return o;
    if (this.sentCount !== 0 && now - this.sentAt < this.rtt.rto()) return o;
    if (this.sentCount >= CLOSE_ATTEMPTS) return -1;
    buf[o] = FrameType.Close << 4;
    buf[o + 1] = reason.length;
    buf.set(reason, o + 2);
    this.sentCount++;
    this.sentAt = now;
    return o + 2 + reason.length;
  }
}
