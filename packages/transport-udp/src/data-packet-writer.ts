import type { ReceivedPackets } from './received-packets.js';
import { DATA_HEADER_BYTES, DATA_MARK, DataFlag, sealData } from './wire.js';

/** Where the frames of a DATA packet start in the scratch buffer (room for the longest header). */
export const FRAMES_AT = DATA_HEADER_BYTES - 4;

/**
 * The layout of an outgoing DATA packet (see wire.ts) in one reused buffer: frames are written
 * from {@link FRAMES_AT} up to {@link limit}; {@link finish} puts the header (flags, connection id,
 * [sequence number], [acks]) right before them, moves the lot to offset 0 and seals it with the
 * CRC when it is tracked or carries acks, so the datagram stays within the MTU. The datagrams are
 * views of the buffer made once per length: writing allocates nothing.
 * @internal
 */
export class DataPacketWriter {
  /** The scratch buffer the frames are written into. */
  readonly buf: Uint8Array;
  /** Where the frames must end (the header and CRC fill the rest of the MTU). */
  readonly limit: number;
  /** After {@link finish}: the header's length. */
  headerBytes = 0;
  /** Views of `buf` by length: the datagrams handed out. */
  private readonly views: Array<Uint8Array | undefined> = [];
  /** Scratch for a DATA header (at most {@link FRAMES_AT} bytes). */
  private readonly hdr = new Uint8Array(FRAMES_AT);

  constructor(mtu: number) {
    this.buf = new Uint8Array(FRAMES_AT + mtu);
    this.limit = FRAMES_AT + mtu - DATA_HEADER_BYTES;
  }

  /**
   * Completes the packet whose frames are `buf[FRAMES_AT, o)`: `tracked` with sequence number
   * `seq`, carrying the acks of `acks` if given, held back `ackDelay` (0.1 ms units). Returns the
   * datagram (lent until the next packet).
   */
  finish(
    o: number,
    sessionId: number,
    tracked: boolean,
    seq: number,
    acks: ReceivedPackets | undefined,
    ackDelay: number,
  ): Uint8Array {
    const buf = this.buf;
    const hdr = this.hdr;
    let h = 3;
    if (tracked) {
      hdr[h++] = seq >>> 8;
      hdr[h++] = seq;
    }
    if (acks) h = acks.writeAck(hdr, h, ackDelay);
    hdr[0] =
      DATA_MARK | (tracked ? DataFlag.Tracked : 0) | (acks ? DataFlag.Ack : 0) | (tracked || acks ? DataFlag.Crc : 0);
    hdr[1] = sessionId >>> 8;
    hdr[2] = sessionId;
    // The frames move up behind the header (a memmove), so every datagram starts at 0 and its
    // views are made once per length.
    buf.copyWithin(h, FRAMES_AT, o);
    for (let i = 0; i < h; i++) buf[i] = hdr[i]!;
    o = o - FRAMES_AT + h;
    if (tracked || acks) o = sealData(buf, o, this.view(o));
    this.headerBytes = h;
    return this.view(o);
  }

  /** The first `length` bytes of `buf`, as a view made once per length. */
  private view(length: number): Uint8Array {
    let v = this.views[length];
    if (!v) {
      v = this.buf.subarray(0, length);
      this.views[length] = v;
    }
    return v;
  }
}
