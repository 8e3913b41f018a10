import type { OutMessage } from './out-message.js';

/**
 * A tracked packet in flight: its sequence number, when it left, and the reliable fragments it
 * carries (as message + fragment index pairs, in reused arrays). Pooled by the peer.
 * @internal
 */
export class SentPacket {
  seq = 0;
  sentAt = 0;
  /** The packet carried our Close frame. */
  close = false;
  /** Still in flight (false once acknowledged or declared lost). */
  live = false;
  /** Number of fragments carried. */
  fragCount = 0;
  /** Per fragment: its message (first `fragCount` entries). */
  readonly fragMsg: Array<OutMessage | undefined> = [];
  /** Per fragment: its index in the message. */
  readonly fragIdx: number[] = [];

  /** Records that the packet carries fragment `idx` of `msg`. */
  add(msg: OutMessage, idx: number): void {
    this.fragMsg[this.fragCount] = msg;
    this.fragIdx[this.fragCount] = idx;
    this.fragCount++;
  }

  /** Forgets the fragments (drops the message references) for reuse. */
  reset(): void {
    for (let i = 0; i < this.fragCount; i++) this.fragMsg[i] = undefined;
    this.fragCount = 0;
    this.close = false;
    this.live = false;
  }
}
