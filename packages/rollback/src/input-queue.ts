import { RollbackError } from './errors.js';
import { InputStatus } from './input-status.js';
import type { Predictor } from './predictor.js';

/**
 * The confirmed inputs of one player, frame after frame without gaps, in a preallocated ring of
 * `capacity` frames (older frames are overwritten), with prediction for frames not received yet
 * and an optional frame from which the player is gone (inputs all zero, status `Disconnected`).
 */
export class InputQueue {
  private readonly buf: Uint8Array;
  private readonly views: Uint8Array[];
  private last = -1;
  private gone = Number.POSITIVE_INFINITY;
  private firstFrame = 0;

  constructor(
    /** Bytes of one input. */
    readonly inputBytes: number,
    /** How many frames are kept. */
    readonly capacity = 512,
  ) {
    if (!Number.isInteger(inputBytes) || inputBytes < 1 || inputBytes > 0xffff)
      throw new RollbackError('bad-argument', `inputBytes must be 1..65535, got ${inputBytes}`);
    if (!Number.isInteger(capacity) || capacity < 2)
      throw new RollbackError('bad-argument', `capacity must be an integer >= 2, got ${capacity}`);
    this.buf = new Uint8Array(inputBytes * capacity);
    this.views = Array.from({ length: capacity }, (_, i) => this.buf.subarray(i * inputBytes, (i + 1) * inputBytes));
  }

  /** The newest confirmed frame (−1 before any). Every frame from {@link oldestFrame} to it is known. */
  get lastFrame(): number {
    return this.last;
  }

  /** The oldest frame still held. */
  get oldestFrame(): number {
    return Math.max(this.firstFrame, this.last - this.capacity + 1);
  }

  /** The first frame at which the player is gone (Infinity while present). */
  get disconnectFrame(): number {
    return this.gone;
  }

  /** The next frame whose input is not known: `lastFrame + 1`, or Infinity once the player is gone. */
  get unreadFrame(): number {
    return this.gone <= this.last + 1 ? Number.POSITIVE_INFINITY : this.last + 1;
  }

  /** True when the confirmed input of `frame` is known (received, or zero after a disconnect). */
  has(frame: number): boolean {
    if (frame >= this.gone) return true;
    return frame <= this.last && frame >= this.oldestFrame;
  }

  /**
   * Starts the queue at `frame` (after a savestate jump): inputs before it are irrelevant.
   * Keeps nothing older.
   */
  restartAt(frame: number): void {
    if (frame > this.last + 1) {
      this.firstFrame = frame;
      this.last = frame - 1;
    }
  }

  /**
   * Appends the confirmed input of `frame`, read from `src` at `offset`. Frames already known are
   * ignored (returns false); a gap throws `protocol`.
   */
  add(frame: number, src: Uint8Array, offset = 0): boolean {
    if (frame <= this.last || frame >= this.gone) return false;
    if (frame !== this.last + 1)
      throw new RollbackError('protocol', `input of frame ${frame} leaves a gap after ${this.last}`, frame);
    const n = this.inputBytes;
    const at = (frame % this.capacity) * n;
    for (let k = 0; k < n; k++) this.buf[at + k] = src[offset + k]!;
    this.last = frame;
    return true;
  }

  /** The stored input of `frame` (a view into the ring), or undefined when not held. */
  input(frame: number): Uint8Array | undefined {
    if (frame > this.last || frame < this.oldestFrame) return undefined;
    return this.views[frame % this.capacity];
  }

  /**
   * Marks the player gone from `frame` on (the earliest mark wins); inputs already received for
   * later frames are dropped.
   */
  disconnectAt(frame: number): void {
    if (frame >= this.gone) return;
    this.gone = frame;
    if (this.last >= frame) this.last = Math.max(frame - 1, this.firstFrame - 1);
  }

  /**
   * The player plays again from `frame` (after a leave at {@link disconnectFrame}): the frames in
   * between are stored as zero inputs, and real inputs are expected from `frame`.
   * @throws RollbackError `protocol` if inputs before the leave are missing or `frame` is before it.
   */
  rejoinAt(frame: number): void {
    if (this.gone === Number.POSITIVE_INFINITY) return;
    if (frame < this.gone || this.last + 1 < this.gone)
      throw new RollbackError('protocol', `cannot rejoin at ${frame}: gone at ${this.gone}, inputs up to ${this.last}`);
    const n = this.inputBytes;
    if (frame - (this.last + 1) > this.capacity) {
      this.firstFrame = frame - this.capacity;
      this.last = this.firstFrame - 1;
    }
    for (let f = this.last + 1; f < frame; f++)
      this.buf.fill(0, (f % this.capacity) * n, ((f % this.capacity) + 1) * n);
    this.last = frame - 1;
    this.gone = Number.POSITIVE_INFINITY;
  }

  /**
   * Writes the input of `frame` into `out` at `offset` and returns its status: confirmed, zero
   * after a disconnect, or else the predictor's guess from the newest confirmed input.
   */
  read(
    frame: number,
    out: Uint8Array,
    offset: number,
    predictor: Predictor,
    player: number,
    scratch: Uint8Array,
  ): InputStatus {
    const n = this.inputBytes;
    if (frame >= this.gone) {
      for (let k = 0; k < n; k++) out[offset + k] = 0;
      return InputStatus.Disconnected;
    }
    const held = this.input(frame);
    if (held !== undefined) {
      for (let k = 0; k < n; k++) out[offset + k] = held[k]!;
      return InputStatus.Confirmed;
    }
    scratch.fill(0);
    predictor(
      this.last >= this.oldestFrame ? this.views[this.last % this.capacity] : undefined,
      frame,
      player,
      scratch,
    );
    for (let k = 0; k < n; k++) out[offset + k] = scratch[k]!;
    return InputStatus.Predicted;
  }
}
