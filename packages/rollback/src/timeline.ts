import { RollbackError } from './errors.js';
import { InputQueue } from './input-queue.js';
import { InputStatus } from './input-status.js';
import type { Predictor } from './predictor.js';
import type { RequestList } from './requests.js';

const NONE = Number.POSITIVE_INFINITY;

/**
 * The frame bookkeeping shared by every session: one input queue per player, the inputs actually
 * used for each recently simulated frame (to spot mispredictions), the first mispredicted frame,
 * and the requests that roll back, resimulate and advance. RetroArch's names: `self` is
 * {@link currentFrame}, `unread` is {@link unreadFrame}, `other` is {@link otherFrame}.
 * @internal
 */
export class Timeline {
  readonly queues: InputQueue[];
  /** Frames of used inputs and checksums kept. */
  readonly history: number;
  private readonly rowBytes: number;
  private readonly used: Uint8Array;
  private readonly usedRows: Uint8Array[];
  private readonly usedPlayers: Uint8Array[][];
  private readonly usedStatus: Uint8Array;
  private readonly statusRows: Uint8Array[];
  private readonly usedFrame: Float64Array;
  private readonly sumFrame: Float64Array;
  private readonly sums: BigUint64Array;
  /** The bytes of {@link sums}. */
  private readonly sumBytes: Uint8Array;
  private readonly scratch: Uint8Array;
  /** The next frame to simulate (RetroArch's self). */
  currentFrame = 0;
  /** The first frame simulated with a wrong prediction, or Infinity. */
  firstIncorrect = NONE;
  /** False until the state of {@link currentFrame} has been saved. */
  savedCurrent = false;
  rollbacks = 0;
  lastRollbackDepth = 0;
  maxRollbackDepth = 0;
  resimulatedFrames = 0;
  /** Per player: rollbacks caused by that player's inputs. */
  readonly rollbacksBy: Uint32Array;
  /** Per player: the deepest rollback its inputs caused. */
  readonly maxDepthBy: Uint32Array;
  predictor: Predictor;

  constructor(
    readonly players: number,
    readonly inputBytes: number,
    readonly maxPrediction: number,
    predictor: Predictor,
    queueCapacity = 512,
  ) {
    if (!Number.isInteger(players) || players < 1 || players > 255)
      throw new RollbackError('bad-argument', `players must be 1..255, got ${players}`);
    if (!Number.isInteger(maxPrediction) || maxPrediction < 0 || maxPrediction > 120)
      throw new RollbackError('bad-argument', `maxPrediction must be 0..120, got ${maxPrediction}`);
    this.predictor = predictor;
    this.queues = Array.from({ length: players }, () => new InputQueue(inputBytes, queueCapacity));
    this.history = Math.max(4 * maxPrediction + 16, 256);
    this.rowBytes = players * inputBytes;
    this.used = new Uint8Array(this.history * this.rowBytes);
    this.usedRows = [];
    this.usedPlayers = [];
    for (let i = 0; i < this.history; i++) {
      const row = this.used.subarray(i * this.rowBytes, (i + 1) * this.rowBytes);
      this.usedRows.push(row);
      this.usedPlayers.push(
        Array.from({ length: players }, (_, p) => row.subarray(p * inputBytes, (p + 1) * inputBytes)),
      );
    }
    this.usedStatus = new Uint8Array(this.history * players);
    this.statusRows = Array.from({ length: this.history }, (_, i) =>
      this.usedStatus.subarray(i * players, (i + 1) * players),
    );
    this.usedFrame = new Float64Array(this.history).fill(-1);
    this.sumFrame = new Float64Array(this.history).fill(-1);
    this.sums = new BigUint64Array(this.history);
    this.sumBytes = new Uint8Array(this.sums.buffer);
    this.scratch = new Uint8Array(inputBytes);
    this.rollbacksBy = new Uint32Array(players);
    this.maxDepthBy = new Uint32Array(players);
  }

  /** RetroArch's unread: the first frame at which some player's input is still unknown. */
  get unreadFrame(): number {
    let u = NONE;
    for (const q of this.queues) {
      const f = q.unreadFrame;
      if (f < u) u = f;
    }
    return u;
  }

  /** RetroArch's other: the first frame not yet simulated with everybody's real input. */
  get otherFrame(): number {
    return Math.min(this.unreadFrame, this.currentFrame, this.firstIncorrect);
  }

  /**
   * Adds a local input for `frame` (current frame + input delay). Frames skipped since the last
   * local input (the delay grew) repeat the last input; a frame already filled (the delay
   * shrank) keeps its input and this one is dropped (returns false).
   */
  addLocal(player: number, frame: number, input: Uint8Array): boolean {
    const q = this.queues[player]!;
    if (frame <= q.lastFrame || frame >= q.disconnectFrame) return false;
    while (q.lastFrame + 1 < frame) {
      const prev = q.input(q.lastFrame);
      if (prev === undefined) {
        this.scratch.fill(0);
        this.confirm(player, q.lastFrame + 1, this.scratch, 0);
      } else {
        this.scratch.set(prev);
        this.confirm(player, q.lastFrame + 1, this.scratch, 0);
      }
    }
    this.confirm(player, frame, input, 0);
    return true;
  }

  /** Adds a confirmed input (local or remote) and marks a misprediction if the frame ran with another. */
  confirm(player: number, frame: number, src: Uint8Array, offset: number): boolean {
    const q = this.queues[player]!;
    if (!q.add(frame, src, offset)) return false;
    if (frame < this.currentFrame && frame < this.firstIncorrect) {
      const slot = frame % this.history;
      if (this.usedFrame[slot] === frame && this.statusRows[slot]![player] === InputStatus.Predicted) {
        const got = this.usedPlayers[slot]![player]!;
        const n = this.inputBytes;
        for (let k = 0; k < n; k++) {
          if (got[k] !== src[offset + k]) {
            this.firstIncorrect = frame;
            this.rollbacksBy[player]!++;
            const depth = this.currentFrame - frame;
            if (depth > this.maxDepthBy[player]!) this.maxDepthBy[player] = depth;
            break;
          }
        }
      } else if (this.usedFrame[slot] !== frame) {
        // Simulated too long ago to check: resimulate conservatively.
        this.firstIncorrect = frame;
      }
    }
    return true;
  }

  /** Marks `player` gone from `frame` on, rolling back if frames from there ran with other inputs. */
  disconnect(player: number, frame: number): void {
    this.queues[player]!.disconnectAt(frame);
    if (frame < this.currentFrame && frame < this.firstIncorrect) this.firstIncorrect = frame;
  }

  /** `player` plays again from `frame`; frames from there that ran without it are resimulated. */
  rejoin(player: number, frame: number): void {
    this.queues[player]!.rejoinAt(frame);
    if (frame < this.currentFrame && frame < this.firstIncorrect) this.firstIncorrect = frame;
  }

  /** Fills the used-input row of `frame` from the queues and returns its slot. */
  private fill(frame: number): number {
    const slot = frame % this.history;
    const row = this.usedRows[slot]!;
    const status = this.statusRows[slot]!;
    const n = this.inputBytes;
    for (let p = 0; p < this.players; p++) {
      status[p] = this.queues[p]!.read(frame, row, p * n, this.predictor, p, this.scratch);
    }
    this.usedFrame[slot] = frame;
    return slot;
  }

  private advanceInto(list: RequestList, frame: number, resim: boolean): void {
    const slot = this.fill(frame);
    list.advance(frame, this.usedRows[slot]!, this.usedPlayers[slot]!, this.statusRows[slot]!, resim);
  }

  /** Saves the current frame if it never was (start of a session, after a jump). */
  saveIfNeeded(list: RequestList): void {
    if (!this.savedCurrent) {
      list.save(this.currentFrame);
      this.savedCurrent = true;
    }
  }

  /** If a frame ran with a wrong prediction: load it and resimulate up to the current frame. */
  rollbackIfNeeded(list: RequestList): void {
    if (this.firstIncorrect >= this.currentFrame) {
      this.firstIncorrect = NONE;
      return;
    }
    this.resimulateFrom(list, this.firstIncorrect, undefined);
    this.firstIncorrect = NONE;
  }

  /** Loads the state of `from` (stored, or the given bytes) and resimulates up to the current frame. */
  resimulateFrom(list: RequestList, from: number, state: Uint8Array | undefined): void {
    const depth = this.currentFrame - from;
    list.load(from, state);
    // A state from the host replaces the stored one: a later rollback to `from` must find it.
    if (state !== undefined) list.save(from);
    for (let f = from; f < this.currentFrame; f++) {
      this.advanceInto(list, f, true);
      list.save(f + 1);
    }
    this.rollbacks++;
    this.lastRollbackDepth = depth;
    if (depth > this.maxRollbackDepth) this.maxRollbackDepth = depth;
    this.resimulatedFrames += depth;
  }

  /** Simulates the current frame with the best inputs known, then saves the next one. */
  advance(list: RequestList): void {
    this.advanceInto(list, this.currentFrame, false);
    this.currentFrame++;
    list.save(this.currentFrame);
  }

  /** Moves to `frame` with a savestate from the host (a jump ahead, or a load and replay). */
  loadState(list: RequestList, frame: number, state: Uint8Array): void {
    // Frames before the load that ran with a wrong prediction are still history every peer keeps
    // (and may take as final): correct them first, the load only replaces what comes from `frame` on.
    if (this.firstIncorrect < frame) this.rollbackIfNeeded(list);
    // Too far back to replay in one step (the used-input rows would wrap): go back in time instead.
    if (frame < this.currentFrame && this.currentFrame - frame < this.history - 1) {
      this.resimulateFrom(list, frame, state);
      this.firstIncorrect = NONE;
      return;
    }
    list.load(frame, state);
    list.save(frame);
    this.currentFrame = frame;
    this.savedCurrent = true;
    this.firstIncorrect = NONE;
    for (const q of this.queues) q.restartAt(frame);
  }

  /**
   * Records the checksum reported for the state of `frame` (replacing one of an earlier
   * simulation of that frame). Reads nothing back: a `bigint` read from the ring is a new heap
   * object, and this runs for every save of an exchange frame, resimulations included.
   */
  recordChecksum(frame: number, sum: bigint): void {
    const slot = frame % this.history;
    this.sumFrame[slot] = frame;
    this.sums[slot] = sum;
  }

  /** The checksum last reported for `frame`, if still held (allocates the `bigint`). */
  checksumOf(frame: number): bigint | undefined {
    const slot = frame % this.history;
    return this.sumFrame[slot] === frame ? this.sums[slot] : undefined;
  }

  /**
   * Copies the 8 bytes of the checksum last reported for `frame` (the ring's own layout: a
   * `BigUint64Array` viewed over them holds the value) to `target[at, at + 8)`, allocating nothing.
   * @returns false, with nothing written, when it is no longer (or not yet) held.
   */
  checksumInto(frame: number, target: Uint8Array, at: number): boolean {
    const slot = frame % this.history;
    if (this.sumFrame[slot] !== frame) return false;
    const b = this.sumBytes;
    const from = slot * 8;
    for (let k = 0; k < 8; k++) target[at + k] = b[from + k]!;
    return true;
  }
}
