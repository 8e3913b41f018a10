/**
 * Tracks which frames handed to a socket-like sender (a WebSocket, an RTCDataChannel) are still in
 * its send buffer, from its `bufferedAmount` alone, for transports whose API has no per-message
 * acknowledgements (transport-ws, transport-webrtc; it fills a `ConnectionStats` send queue).
 *
 * Every frame given to the sender advances a byte position; data frames are remembered with the
 * position of their last byte and their payload size. The bytes written so far are estimated as
 * `position − bufferedAmount`; frames ending at or before that are gone. Where `bufferedAmount`
 * also counts framing bytes (WebSocket headers in Node), the estimate lags a little: frames count as
 * queued a bit longer, never shorter, and all are released once the buffer is empty.
 *
 * Storage is a growable ring of two `Float64Array`s, so steady-state sending allocates nothing.
 */
export class SendLedger {
  private ends = new Float64Array(64);
  private sizes = new Float64Array(64);
  private head = 0;
  private count = 0;
  private position = 0;
  /** Payload bytes of the frames still queued. */
  queuedBytes = 0;

  /** Frames still queued. */
  get length(): number {
    return this.count;
  }

  /**
   * Records a frame of `frameBytes` handed to the sender. Only data frames (`data`) are tracked as
   * queued messages, with `payloadBytes` of payload; control frames just advance the position.
   */
  push(frameBytes: number, payloadBytes: number, data: boolean): void {
    this.position += frameBytes;
    if (!data) return;
    if (this.count === this.ends.length) this.grow();
    const i = (this.head + this.count) % this.ends.length;
    this.ends[i] = this.position;
    this.sizes[i] = payloadBytes;
    this.count++;
    this.queuedBytes += payloadBytes;
  }

  /** Releases the frames the sender has written, given its current `bufferedAmount`. */
  update(bufferedAmount: number): void {
    const written = bufferedAmount <= 0 ? this.position : this.position - bufferedAmount;
    while (this.count > 0 && this.ends[this.head]! <= written) {
      this.queuedBytes -= this.sizes[this.head]!;
      this.head = (this.head + 1) % this.ends.length;
      this.count--;
    }
    if (this.count === 0) this.queuedBytes = 0;
  }

  private grow(): void {
    const n = this.ends.length * 2;
    const ends = new Float64Array(n);
    const sizes = new Float64Array(n);
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) % this.ends.length;
      ends[k] = this.ends[i]!;
      sizes[k] = this.sizes[i]!;
    }
    this.ends = ends;
    this.sizes = sizes;
    this.head = 0;
  }
}
