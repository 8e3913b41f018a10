import { PadButton } from '@netplay/core-wasm';
import { Prng } from '@netplay/transport';

/** A source of one 2-byte pad input per frame. */
export interface InputSource {
  /** This frame's input (the same array every call). */
  next(): Uint8Array;
  close(): void;
}

function write(input: Uint8Array, pad: number): Uint8Array {
  input[0] = pad & 0xff;
  input[1] = pad >>> 8;
  return input;
}

/**
 * A seeded Space Racer bot (the CLI's RacerBot logic): mostly races upwards, sometimes backs off
 * or idles, changing its mind every 4–44 frames. The same seed gives the same inputs.
 */
export class BotInput implements InputSource {
  private readonly prng: Prng;
  private pad = 0;
  private holdFor = 0;
  private readonly input = new Uint8Array(2);

  constructor(seed: number) {
    this.prng = new Prng(seed >>> 0);
  }

  next(): Uint8Array {
    if (this.holdFor-- <= 0) {
      const r = this.prng.nextFloat();
      this.pad = r < 0.7 ? 1 << PadButton.Up : r < 0.85 ? 1 << PadButton.Down : 0;
      this.holdFor = this.prng.int(4, 45);
    }
    return write(this.input, this.pad);
  }

  close(): void {}
}

const KEYS: Readonly<Record<string, number>> = {
  KeyW: PadButton.Up,
  ArrowUp: PadButton.Up,
  KeyS: PadButton.Down,
  ArrowDown: PadButton.Down,
  KeyA: PadButton.Left,
  ArrowLeft: PadButton.Left,
  KeyD: PadButton.Right,
  ArrowRight: PadButton.Right,
};

/** The keyboard: W/S or the arrows for up/down (A/D or left/right too), held while pressed. */
export class KeyboardInput implements InputSource {
  private pad = 0;
  private readonly input = new Uint8Array(2);
  private readonly down = (e: KeyboardEvent): void => this.key(e, true);
  private readonly up = (e: KeyboardEvent): void => this.key(e, false);
  private readonly blur = (): void => {
    this.pad = 0;
  };

  constructor(private readonly target: Window) {
    target.addEventListener('keydown', this.down);
    target.addEventListener('keyup', this.up);
    target.addEventListener('blur', this.blur);
  }

  private key(e: KeyboardEvent, pressed: boolean): void {
    const button = KEYS[e.code];
    if (button === undefined) return;
    e.preventDefault();
    if (pressed) this.pad |= 1 << button;
    else this.pad &= ~(1 << button);
  }

  next(): Uint8Array {
    return write(this.input, this.pad);
  }

  close(): void {
    this.target.removeEventListener('keydown', this.down);
    this.target.removeEventListener('keyup', this.up);
    this.target.removeEventListener('blur', this.blur);
  }
}
