import { crc32Update } from '@netplay/protocol';
import { RetroArchError } from './errors.js';
import type { RetroArchCore } from './retroarch-core.js';

/**
 * A core's state as RetroArch's netplay holds it: the `retro_serialize` bytes zero-padded to one
 * fixed size, the serialize size RetroArch measured when it loaded the content (the power-on
 * size). LOAD_SAVESTATE must announce exactly that size (RetroArch NAKs another), and its CRC
 * message is the CRC-32 of all of it, padding included. Nestopia 1.52 needs this: its power-on
 * state is 21,472 bytes, every later one 21,463 (a chunk shrinks after the first frame), and a
 * RetroArch host sends 21,463 bytes and 9 zero bytes.
 */
export class RetroArchNetplayState {
  /** The padded state after {@link capture}. */
  readonly bytes: Uint8Array;

  constructor(
    private readonly core: RetroArchCore,
    /** RetroArch's state size: default the core's serialize size now (its power-on size when fresh). */
    readonly size: number = core.saveRawInto(new Uint8Array(core.rawStateBytes)),
  ) {
    this.bytes = new Uint8Array(Math.max(size, core.rawStateBytes));
  }

  /**
   * Serializes the core's current frame, zero-padded to {@link size}; returns the size.
   * @throws RetroArchError `core-state` when the core's state outgrew RetroArch's size.
   */
  capture(): number {
    const n = this.core.saveRawInto(this.bytes);
    if (n > this.size) {
      throw new RetroArchError('core-state', `the core's state grew to ${n} bytes, over RetroArch's ${this.size}`);
    }
    this.bytes.fill(0, n, this.size);
    return this.size;
  }

  /** CRC-32 (zlib) of the current frame's padded state: what RetroArch's CRC message carries. */
  crc(): number {
    this.capture();
    return crc32Update(0, this.bytes, 0, this.size) >>> 0;
  }
}
