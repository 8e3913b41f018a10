import { PadButton } from '@netplay/core-wasm';

/** Pad bits past the CHIP-8 layout, used by libretro cores only: Start (Enter) and Select (Tab). */
export const PadExtra = { Start: 6, Select: 7 } as const;

/**
 * Terminal keys → pad buttons (the CHIP-8 core's `pad` layout, mapped through the game's keys):
 * W / ↑ up, S / ↓ down, A / ← left, D / → right, Space / J button A, K button B; on libretro
 * cores also Enter Start and Tab Select ({@link PadExtra}).
 */
export const KEY_BINDINGS: Readonly<Record<string, number>> = {
  w: PadButton.Up,
  W: PadButton.Up,
  '\x1b[A': PadButton.Up,
  s: PadButton.Down,
  S: PadButton.Down,
  '\x1b[B': PadButton.Down,
  a: PadButton.Left,
  A: PadButton.Left,
  '\x1b[D': PadButton.Left,
  d: PadButton.Right,
  D: PadButton.Right,
  '\x1b[C': PadButton.Right,
  ' ': PadButton.A,
  j: PadButton.A,
  J: PadButton.A,
  k: PadButton.B,
  K: PadButton.B,
  '\r': PadExtra.Start,
  '\t': PadExtra.Select,
};

/** Keys that end the session: q, Q, Ctrl-C (raw mode delivers it as a byte, not a signal), Esc alone. */
const QUIT_KEYS = new Set(['q', 'Q', '\x03', '\x1b']);

/** Splits a chunk of raw terminal input into keys (arrow escape sequences stay whole). */
export function splitKeys(chunk: string): string[] {
  const keys: string[] = [];
  for (let i = 0; i < chunk.length; ) {
    if (chunk[i] === '\x1b' && chunk[i + 1] === '[' && i + 2 < chunk.length) {
      keys.push(chunk.slice(i, i + 3));
      i += 3;
    } else {
      keys.push(chunk[i]!);
      i++;
    }
  }
  return keys;
}

/**
 * Which buttons are held, from key presses. A terminal reports presses (and auto-repeats), never
 * releases, so a button counts as held for `holdMs` after its last press; the first auto-repeat
 * comes after ~250–500 ms, so the first press holds longer (`firstHoldMs`).
 */
export class KeyState {
  private readonly until = new Float64Array(16);
  private readonly lastPress = new Float64Array(16).fill(Number.NEGATIVE_INFINITY);
  /** True once a quit key was pressed. */
  quit = false;

  constructor(
    private readonly holdMs = 120,
    private readonly firstHoldMs = 550,
  ) {}

  /** Feeds raw terminal input received at time `now` (ms). */
  feed(chunk: string, now: number): void {
    for (const key of splitKeys(chunk)) {
      if (QUIT_KEYS.has(key)) {
        this.quit = true;
        continue;
      }
      const button = KEY_BINDINGS[key];
      if (button === undefined) continue;
      const repeating = now - this.lastPress[button]! < this.firstHoldMs;
      this.until[button] = now + (repeating ? this.holdMs : this.firstHoldMs);
      this.lastPress[button] = now;
    }
  }

  /** The 16-bit pad mask held at time `now`. */
  pad(now: number): number {
    let mask = 0;
    for (let b = 0; b < 16; b++) if (this.until[b]! > now) mask |= 1 << b;
    return mask;
  }
}

/** Minimal view of a TTY stdin (process.stdin). */
export interface RawInput {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  setEncoding(encoding: 'utf8'): unknown;
  on(event: 'data', fn: (chunk: string) => void): unknown;
  off(event: 'data', fn: (chunk: string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Puts a TTY stdin in raw mode and feeds `state`; returns the function that restores it. */
export function attachKeyboard(stdin: RawInput, state: KeyState, now: () => number): () => void {
  if (stdin.isTTY !== true || stdin.setRawMode === undefined) return () => {};
  const onData = (chunk: string) => state.feed(chunk, now());
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.on('data', onData);
  stdin.resume();
  return () => {
    stdin.off('data', onData);
    stdin.setRawMode?.(false);
    stdin.pause();
  };
}
