import type { InputSource } from './input.js';

/** One peer the page drives at 60 Hz: a session host or client. */
export interface LoopPeer {
  /** Runs one tick with the local input (undefined: spectator / neutral). */
  tick(input: Uint8Array | undefined): void;
  /** Records the final frames after a tick (a spectator keeps only its last states). */
  record(): void;
  /** The last frame recorded as final (-1 before any). */
  lastFinal(): number;
  /** The current frame (-1 before the game). */
  frame(): number;
  /** The live stats line. */
  stats(): string;
  /** Set once the session ended (the reason), else undefined. */
  ended(): string | undefined;
  /** Leaves the session (after a normal stop). */
  leave(): void;
  /** Drawn after each timer callback. */
  draw(): void;
}

const FRAME_MS = 1000 / 60;
/** At most this many frames run per timer callback when the page falls behind. */
const MAX_CATCH_UP = 4;

/**
 * Ticks `peer` at 60 Hz (wall-clock paced, catching up at most 4 frames per timer callback) until
 * `seconds` pass, frame `frames` is final, or the session ends; resolves with the error that
 * stopped it (undefined: a normal stop).
 */
export function runLoop(
  peer: LoopPeer,
  input: InputSource | undefined,
  limits: { seconds: number | undefined; frames: number | undefined },
  onFrame: (frame: number, stats: string) => void,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const start = performance.now();
    let ran = 0;
    const stop = (error: string | undefined): void => {
      clearInterval(timer);
      input?.close();
      if (error === undefined) peer.leave();
      resolve(error);
    };
    const timer = setInterval(() => {
      const now = performance.now();
      const ended = peer.ended();
      if (ended !== undefined) return stop(ended);
      if (limits.seconds !== undefined && now - start >= limits.seconds * 1000) return stop(undefined);
      const due = Math.floor((now - start) / FRAME_MS);
      if (due - ran > MAX_CATCH_UP) ran = due - MAX_CATCH_UP;
      while (ran < due) {
        ran++;
        peer.tick(input?.next());
        // After every tick: a spectator keeps only its last states, so a frame not recorded
        // before the next ticks would be gone (a loaded machine runs several ticks per callback).
        peer.record();
      }
      peer.draw();
      onFrame(peer.frame(), peer.stats());
      if (limits.frames !== undefined && peer.lastFinal() >= limits.frames) stop(undefined);
    }, FRAME_MS / 2);
  });
}
