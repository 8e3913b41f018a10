import type { Clock } from '@netplay/transport';
import type { Bot } from './game.js';
import type { CliIo } from './io.js';
import { attachKeyboard, KeyState, type RawInput } from './keyboard.js';
import { redraw } from './render.js';

/** 60 frames per second. */
export const FRAME_MS = 1000 / 60;

/** Where a player's input comes from each frame. */
export interface InputSource {
  /** This frame's 2-byte pad input (the same array may be returned every call). */
  next(now: number): Uint8Array;
  /** True once the person asked to quit (q, Esc, Ctrl-C). */
  readonly quit: boolean;
  /** Restores the terminal. */
  close(): void;
}

/** The keyboard's pad bits as the CHIP-8 core's 2-byte input (a reused array). */
function chip8PadInput(): (pad: number) => Uint8Array {
  const input = new Uint8Array(2);
  return (pad) => {
    input[0] = pad & 0xff;
    input[1] = pad >>> 8;
    return input;
  };
}

/**
 * The input of a local player: a bot (`--bot`, seeded, made by the game), the keyboard of a TTY
 * stdin (raw mode; `padInput` turns its pad bits into the core's input), or no input at all
 * (stdin is not a terminal).
 */
export function inputSource(
  kind: { bot?: Bot; stdin?: RawInput },
  clock: Clock,
  padInput: (pad: number) => Uint8Array = chip8PadInput(),
): InputSource {
  const bot = kind.bot;
  if (bot !== undefined) return { next: () => bot.next(), quit: false, close: () => {} };
  const keys = new KeyState();
  const detach = kind.stdin ? attachKeyboard(kind.stdin, keys, () => clock.now()) : () => {};
  return {
    next(now) {
      return padInput(keys.pad(now));
    },
    get quit() {
      return keys.quit;
    },
    close: detach,
  };
}

/** What the screen shows: a title, the game (once it runs), stats lines and recent events. */
export interface View {
  readonly title: string;
  /** The game as terminal text (half-blocks for CHIP-8, braille for libretro video), once it runs. */
  screen(): string | undefined;
  stats(): readonly string[];
  /** The keys line at the bottom of a terminal (default: the player's keys and Q to quit). */
  readonly keys?: string;
}

/** The keys line of a player reading the keyboard. */
export const PLAYER_KEYS = 'keys: W/S/A/D or arrows, Space/J = A, K = B, Enter = Start, Tab = Select, Q to quit';

/** Draws the view on a terminal every other frame, or prints the stats every 5 s otherwise. */
export class Display {
  private readonly events: string[] = [];
  private frames = 0;
  private lastPrint = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly io: CliIo,
    private readonly view: View,
  ) {}

  /** An event line ("alice joined as P2"): printed at once without a terminal, kept on screen with one. */
  event(text: string): void {
    if (this.io.live) {
      this.events.push(text);
      if (this.events.length > 4) this.events.shift();
    } else this.io.out(`${text}\n`);
  }

  /** Called once per frame. */
  frame(now: number): void {
    if (this.io.live) {
      if (this.frames++ % 2 !== 0) return;
      const screen = this.view.screen();
      const lines = [
        this.view.title,
        screen ?? '(waiting for the game to start)',
        ...this.view.stats(),
        ...this.events,
        this.view.keys ?? PLAYER_KEYS,
      ];
      this.io.out(redraw(lines));
    } else if (now - this.lastPrint >= 5000) {
      this.lastPrint = now;
      for (const line of this.view.stats()) this.io.out(`${line}\n`);
    }
  }

  /** Prints the final stats (and leaves the terminal's last picture in place). */
  final(): void {
    for (const line of this.view.stats()) this.io.out(`${line}\n`);
  }
}

/**
 * Calls `frame` 60 times a second (paced by `clock`, without bursting after a stall) until it
 * returns false or `signal` aborts.
 */
export async function paceFrames(
  clock: Clock,
  signal: AbortSignal | undefined,
  frame: (now: number) => boolean,
): Promise<void> {
  let due = clock.now();
  for (;;) {
    if (signal?.aborted) return;
    const now = clock.now();
    if (!frame(now)) return;
    due += FRAME_MS;
    const after = clock.now();
    if (due < after - 100) due = after;
    await new Promise<void>((resolve) => clock.setTimer(Math.max(0, due - after), resolve));
  }
}
