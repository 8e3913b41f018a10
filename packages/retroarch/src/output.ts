import {
  encodeRetroArchHeader,
  encodeRetroArchMessage,
  RETROARCH_HEADER_SIZE,
  type RetroArchHeader,
  type RetroArchMessage,
  retroArchMessageSize,
} from '@netplay/protocol';

/** A growable byte queue of encoded frames waiting to be sent. */
export class OutputQueue {
  private buf = new Uint8Array(4096);
  private end = 0;

  /** Bytes waiting. */
  get length(): number {
    return this.end;
  }

  /** Makes room for `n` more bytes and returns the offset to write them at. */
  reserve(n: number): number {
    if (this.end + n > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < this.end + n) size *= 2;
      const next = new Uint8Array(size);
      next.set(this.buf.subarray(0, this.end));
      this.buf = next;
    }
    const at = this.end;
    this.end += n;
    return at;
  }

  /** The buffer to write reserved bytes into (valid until the next reserve). */
  get bytes(): Uint8Array {
    return this.buf;
  }

  header(h: RetroArchHeader): void {
    // reserve() may replace the buffer: take the offset first.
    const at = this.reserve(RETROARCH_HEADER_SIZE);
    encodeRetroArchHeader(h, this.buf, at);
  }

  message(m: RetroArchMessage): void {
    const at = this.reserve(retroArchMessageSize(m));
    encodeRetroArchMessage(m, this.buf, at);
  }

  raw(bytes: Uint8Array): void {
    const at = this.reserve(bytes.length);
    this.buf.set(bytes, at);
  }

  /** Returns a copy of the waiting bytes and empties the queue (`undefined` when empty). */
  take(): Uint8Array | undefined {
    if (this.end === 0) return undefined;
    const out = this.buf.slice(0, this.end);
    this.end = 0;
    return out;
  }
}
