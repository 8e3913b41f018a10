import type { Prng } from '@netplay/transport';
import { copyEvent, type Ev, type EventQueue } from './frame-advance-events.js';
import { encodeFaEvent } from './frame-advance-wire.js';
import { Ring } from './pool.js';

/**
 * A frame-advance peer's own input events: how each is stamped (its frame and random key) and the
 * copies kept for late joiners (the last `retainFrames` frames).
 */
export class OwnEvents {
  /** Copies of the events sent, oldest first. */
  private readonly log: Ring<Ev>;
  /**
   * The four bytes of the next event key. `prng.fill` draws one `nextU32()` per 4 bytes (lowest
   * byte first), so the key is the same number `nextU32()` returns; but a u32 of 2^31 or more
   * returned from a call V8 does not inline is boxed as a 16-byte heap number (half of all keys).
   */
  private readonly keyBytes = new Uint8Array(4);

  constructor(
    queue: EventQueue,
    private readonly prng: Prng,
    /** Frames of events kept for late joiners. */
    readonly retainFrames: number,
  ) {
    this.log = new Ring(() => queue.newEvent());
  }

  /**
   * Stamps `e` for frame `promised + 1` with a random key. Same-frame events apply in key order:
   * this peer's keys for one frame rise, so its changes apply in the order it made them (a press
   * and release within a frame never apply reversed). The key stays random above the previous
   * one; past the top, the change takes the next frame.
   */
  stamp(e: Ev, promised: number): void {
    e.frame = promised + 1;
    // = this.prng.nextU32(), without boxing it (see `keyBytes`).
    const kb = this.prng.fill(this.keyBytes);
    e.key = (kb[0]! | (kb[1]! << 8) | (kb[2]! << 16) | (kb[3]! << 24)) >>> 0;
    if (this.log.length === 0) return;
    const last = this.log.at(this.log.length - 1);
    if (last.frame < e.frame) return;
    if (last.key === 0xffffffff) e.frame = last.frame + 1;
    else {
      e.frame = last.frame;
      e.key = last.key + 1 + (e.key % (0xffffffff - last.key));
    }
  }

  /** Keeps a copy of `e` (the event itself goes back to the free list once applied), `next` being the next frame to run. */
  keep(e: Ev, next: number): void {
    while (this.log.length > 0 && this.log.at(0).frame < next - this.retainFrames) this.log.shift();
    copyEvent(e, this.log.push());
  }

  /** The kept events from frame `sync` on, encoded, for a newcomer. */
  since(sync: number, each: (data: Uint8Array) => void): void {
    for (let i = 0; i < this.log.length; i++) {
      const e = this.log.at(i);
      if (e.frame >= sync) each(encodeFaEvent(e));
    }
  }
}
