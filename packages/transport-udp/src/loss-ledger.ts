/** Slots of the ledger: at least the span of the ack bitfield, a power of two. */
const SLOTS = 256;

/**
 * Packets declared lost, remembered for a while so that an ack arriving for one of them later is
 * recognised: the loss was spurious (the packet was only reordered or delayed, e.g. by jitter).
 * The peer then widens its reordering tolerance and undoes the window cut that loss caused, as
 * TCP's RACK (RFC 8985) and Eifel (RFC 3522) do. Fixed arrays: nothing is allocated per packet.
 * @internal
 */
export class LossLedger {
  private readonly seqs = new Int32Array(SLOTS);
  private readonly sentAt = new Float64Array(SLOTS);
  /** The highest sequence number recorded (0: none). */
  private newest = 0;
  /** After {@link scan}: the earliest send time among the spurious losses it found. */
  oldestSentAt = 0;
  /** After {@link scan}: whether `cutSeq` was among them. */
  cutWasSpurious = false;

  /** Records that packet `seq`, sent at `sentAt`, was declared lost. */
  record(seq: number, sentAt: number): void {
    const i = seq & (SLOTS - 1);
    this.seqs[i] = seq;
    this.sentAt[i] = sentAt;
    if (seq > this.newest) this.newest = seq;
  }

  /** Whether `seq` is recorded as lost; forgets it. */
  private take(seq: number): boolean {
    const i = seq & (SLOTS - 1);
    if (seq <= 0 || this.seqs[i] !== seq) return false;
    this.seqs[i] = 0;
    if (this.sentAt[i]! < this.oldestSentAt) this.oldestSentAt = this.sentAt[i]!;
    return true;
  }

  /**
   * Looks for recorded losses among the packets an ack says arrived (`ack` and the bits of the
   * bitfield at `d[bitsAt ..]`). Returns how many it found (and forgets them); sets
   * {@link oldestSentAt} and {@link cutWasSpurious}.
   */
  scan(ack: number, d: Uint8Array, bitsAt: number, bitBytes: number, cutSeq: number): number {
    this.oldestSentAt = Number.POSITIVE_INFINITY;
    this.cutWasSpurious = false;
    // Nothing recorded within the ack's reach: the common case costs one comparison.
    if (this.newest === 0 || this.newest < ack - 1 - bitBytes * 8) return 0;
    let found = 0;
    if (this.take(ack)) {
      found++;
      if (ack === cutSeq) this.cutWasSpurious = true;
    }
    for (let j = 0; j < bitBytes; j++) {
      const byte = d[bitsAt + j]!;
      if (byte === 0) continue;
      for (let b = 0; b < 8; b++) {
        if ((byte & (1 << b)) === 0) continue;
        const seq = ack - 1 - (8 * j + b);
        if (this.take(seq)) {
          found++;
          if (seq === cutSeq) this.cutWasSpurious = true;
        }
      }
    }
    return found;
  }
}
