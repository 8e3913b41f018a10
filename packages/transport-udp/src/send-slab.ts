import type { Socket } from 'node:dgram';

/** Size of a slab (many datagrams: one check of the socket's queue per lap). */
const SLAB_BYTES = 256 << 10;

/**
 * Where a dgram shell copies the datagrams its core lends it before `socket.send`: a reused slab
 * instead of a fresh `Buffer` per datagram. `dgram` hands a datagram to the kernel within `send()`
 * when it can, but queues it by reference when the socket buffer is full; so a region is only
 * written again once the slab has gone round and the socket's send queue was empty at the turn
 * (no queued datagram can point into the previous lap). Otherwise a new slab is taken and the old
 * one is left to the queued sends (and then the collector).
 * @internal
 */
export class SendSlab {
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private at = 0;

  constructor(private readonly socket: Socket) {}

  /** Copies `datagram` into the slab; returns the offset it starts at. Read {@link buffer} after. */
  put(datagram: Uint8Array): number {
    const n = datagram.length;
    if (this.at + n > SLAB_BYTES) {
      if (n > SLAB_BYTES || this.socket.getSendQueueCount() > 0) {
        this.slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, n));
      }
      this.at = 0;
    }
    const o = this.at;
    this.slab.set(datagram, o);
    this.at = o + n;
    return o;
  }

  /** The current slab (valid for the offset {@link put} just returned). */
  get buffer(): Buffer {
    return this.slab;
  }
}
