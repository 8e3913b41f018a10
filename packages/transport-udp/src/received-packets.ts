import type { Clock } from '@netplay/transport';
import { ACK_BITS, putVarint, resolve16 } from './wire.js';

/** Size of the receive ring (a power of two above ACK_BITS). */
const RING_PACKETS = 1024;
/**
 * An ack-only packet goes out after this many tracked packets arrived, one tick after the first, or
 * at once when one arrived out of order (a gap, or a hole filled: the sender's loss detection wants
 * to know), whichever comes first. Every ack covers the 128 packets below the highest, so the ones
 * in between are acknowledged too; its delay field keeps RTT samples exact.
 */
export const ACK_EVERY = 16;
/** Packets that repeat the acks after new ones went out. */
const ACK_ECHOES = 2;

/**
 * The receiving side of packet acknowledgement: which tracked packets arrived (a bit per sequence
 * number in a ring), and when to acknowledge them (the rule above). Writes the ack fields of the
 * DATA header. Fixed state: nothing is allocated per packet (no time is passed in as an argument,
 * which V8 may box: it reads the clock itself).
 * @internal
 */
export class ReceivedPackets {
  /** The highest packet sequence number received (0: none). */
  highest = 0;
  /** When {@link highest} arrived (the ack's delay field is measured from it). */
  highestAt = 0;
  /** Received packet sequence numbers, a bit per number modulo RING_PACKETS. */
  private readonly ring = new Uint8Array(RING_PACKETS / 8);
  /** Tracked packets that asked for an ack since the last one went out. */
  pending = 0;
  /** When the first of them arrived. */
  pendingSince = 0;
  /** A tracked packet arrived out of order since the last ack: acknowledge at once. */
  now = false;
  /** Packets still to carry the acks again after the last new ones (in case one is lost). */
  private echoes = 0;

  constructor(private readonly clock: Clock) {}

  /** The full sequence number of a 16-bit one read from a packet. */
  resolve(seq16: number): number {
    return resolve16(seq16, this.highest);
  }

  /**
   * Records tracked packet `seq`, arriving now; false if it was already received. A packet out of
   * order (a gap, or a hole filled) asks for an ack at once.
   */
  receive(seq: number): boolean {
    const outOfOrder = seq !== this.highest + 1 && this.highest !== 0;
    if (!this.note(seq)) return false;
    if (outOfOrder) this.now = true;
    return true;
  }

  /** A tracked packet that elicits an ack was read now: whether the ack should go out at once. */
  elicited(): boolean {
    if (this.pending++ === 0) this.pendingSince = this.clock.now();
    return this.pending >= ACK_EVERY || this.now;
  }

  /** Whether the next DATA packet carries acks. */
  get due(): boolean {
    return this.highest > 0 && (this.pending > 0 || this.echoes > 0);
  }

  /**
   * Writes the ack fields at `hdr[h]` (highest, `delay`: 0.1 ms units since it arrived, trimmed
   * bitfield) and returns the offset after them.
   */
  writeAck(hdr: Uint8Array, h: number, delay: number): number {
    hdr[h++] = this.highest >>> 8;
    hdr[h++] = this.highest;
    h = putVarint(hdr, h, delay);
    const nb = this.writeAckBits(hdr, h + 1);
    hdr[h] = nb;
    this.echoes = this.pending > 0 ? ACK_ECHOES : this.echoes - 1;
    return h + 1 + nb;
  }

  /** A DATA packet went out: whatever was pending is acknowledged. */
  acked(): void {
    this.pending = 0;
    this.now = false;
  }

  /** Whether packet `seq` is marked received in the ring (valid within RING_PACKETS of the highest). */
  private has(seq: number): boolean {
    const i = seq & (RING_PACKETS - 1);
    return (this.ring[i >> 3]! & (1 << (i & 7))) !== 0;
  }

  private set(seq: number, on: boolean): void {
    const i = seq & (RING_PACKETS - 1);
    if (on) this.ring[i >> 3]! |= 1 << (i & 7);
    else this.ring[i >> 3]! &= ~(1 << (i & 7));
  }

  /** Records a packet sequence number in the receive ring; false if it was already received. */
  private note(seq: number): boolean {
    if (seq === 0) return false;
    if (seq > this.highest) {
      const gap = seq - this.highest;
      if (this.highest === 0 || gap >= RING_PACKETS) this.ring.fill(0);
      else for (let s = this.highest + 1; s < seq; s++) this.set(s, false);
      this.set(seq, true);
      this.highest = seq;
      this.highestAt = this.clock.now();
      return true;
    }
    const back = this.highest - seq;
    if (back === 0) return false;
    if (back < RING_PACKETS) {
      if (this.has(seq)) return false;
      this.set(seq, true);
      return true;
    }
    // Too old to tell; frames are deduplicated one level up.
    return true;
  }

  /**
   * Writes the ack bitfield (bit i of byte j: packet highest − 1 − (8j + i) received) at `o`,
   * without its trailing zero bytes (the same to the reader); returns how many bytes it wrote.
   */
  private writeAckBits(buf: Uint8Array, o: number): number {
    const h = this.highest;
    let n = 0;
    for (let j = 0; j < ACK_BITS / 8; j++) {
      let byte = 0;
      for (let i = 0; i < 8; i++) {
        const s = h - 1 - (8 * j + i);
        if (s >= 1 && this.has(s)) byte |= 1 << i;
      }
      buf[o + j] = byte;
      if (byte !== 0) n = j + 1;
    }
    return n;
  }
}
