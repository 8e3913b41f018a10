import { Deque } from './deque.js';
import { SentPacket } from './sent-packet.js';
import { ACK_BITS } from './wire.js';

/** Most tracked packets in flight: the span of the ack bitfield. */
export const MAX_TRACKED = ACK_BITS;
/** Most free {@link SentPacket}s kept for reuse. */
const MAX_FREE_PACKETS = 256;

/**
 * The tracked packets a peer sent, in sequence order: the ones in flight (`live`) and the
 * acknowledged or lost ones not yet trimmed from the front; slot i holds packet `base + i`.
 * Records are pooled: a steady stream allocates none.
 * @internal
 */
export class InFlightPackets {
  private readonly sent = new Deque<SentPacket>(256);
  /** Sequence number of the front slot. */
  base = 1;
  /** Packets still live. */
  count = 0;
  private readonly free = new Deque<SentPacket>();

  /** Slots held (live or not yet trimmed). */
  get length(): number {
    return this.sent.length;
  }

  /** The packet in slot `i` (the caller checks `0 <= i < length`). */
  at(i: number): SentPacket {
    return this.sent.at(i);
  }

  /** The tracked packet `seq` if it is still in flight. */
  live(seq: number): SentPacket | undefined {
    const i = seq - this.base;
    if (i < 0 || i >= this.sent.length) return undefined;
    const p = this.sent.at(i);
    return p.live ? p : undefined;
  }

  /** A recycled (or new) packet record. */
  take(): SentPacket {
    return this.free.shift() ?? new SentPacket();
  }

  /** Puts packet `p` (its `seq` set, the next one) in flight. */
  push(p: SentPacket): void {
    if (this.sent.length === 0) this.base = p.seq;
    p.live = true;
    this.sent.push(p);
    this.count++;
  }

  /** Takes packet `p` out of flight (acknowledged or lost); it is recycled once trimmed. */
  retire(p: SentPacket): void {
    p.live = false;
    this.count--;
  }

  /** Drops retired packets from the front and recycles them. */
  trim(): void {
    while (this.sent.length > 0 && !this.sent.peek()!.live) {
      const p = this.sent.shift()!;
      this.base++;
      p.reset();
      if (this.free.length < MAX_FREE_PACKETS) this.free.push(p);
    }
  }

  /** Forgets every packet. */
  clear(): void {
    this.sent.clear();
    this.count = 0;
  }
}
