import { PadButton } from '@netplay/core-wasm';
import { Prng } from '@netplay/transport';

/**
 * A Space Racer bot on the pad layout: mostly races upwards, sometimes backs off or idles,
 * changing its mind every 4–44 frames. Seeded, so a demo run is reproducible input-wise.
 */
export class RacerBot {
  private readonly prng: Prng;
  private pad = 0;
  private holdFor = 0;
  /** The 2-byte input of the current frame (reused). */
  readonly input = new Uint8Array(2);

  constructor(seed: number) {
    this.prng = new Prng(seed >>> 0);
  }

  /** Chooses this frame's input and returns it (the same array every call). */
  next(): Uint8Array {
    if (this.holdFor-- <= 0) {
      const r = this.prng.nextFloat();
      this.pad = r < 0.7 ? 1 << PadButton.Up : r < 0.85 ? 1 << PadButton.Down : 0;
      this.holdFor = this.prng.int(4, 45);
    }
    this.input[0] = this.pad & 0xff;
    this.input[1] = this.pad >>> 8;
    return this.input;
  }
}
