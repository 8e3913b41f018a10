import type { Clock, Timer } from './clock.js';

/**
 * The real clock: `performance.now()` and the host's `setTimeout`. This module is the only place
 * in the transport packages that reads wall time; everything else takes a {@link Clock}.
 * Works in Node and browsers.
 */
export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const id = setTimeout(callback, Number.isNaN(delayMs) ? 0 : Math.max(0, delayMs));
    return {
      cancel() {
        clearTimeout(id);
      },
    };
  }
}

/** A shared {@link SystemClock} instance. */
export const systemClock: Clock = new SystemClock();
