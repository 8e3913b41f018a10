import { RollbackError } from './errors.js';
import { type Predictor, repeatLastInput } from './predictor.js';
import { RequestList, type SessionRequest } from './requests.js';
import { Timeline } from './timeline.js';

/** Options of {@link SyncTestSession}. */
export interface SyncTestOptions {
  /** Number of players (all local), 1..255. */
  readonly players: number;
  /** Bytes of one player's input per frame. */
  readonly inputBytes: number;
  /** How many frames to roll back and resimulate every frame (default 2, at least 1). */
  readonly checkDistance?: number;
  /** Local input delay in frames (default 0). */
  readonly inputDelay?: number;
  /** Predictor (unused by SyncTest itself since every input is local; kept for symmetry). */
  readonly predictor?: Predictor;
}

/**
 * SyncTest (GGPO, GGRS): everything runs locally, and every frame the session rolls back
 * `checkDistance` frames and simulates them again. Every saved state's checksum must be reported
 * with {@link setChecksum} (the {@link CoreDriver} does it); a frame whose checksum differs from
 * its first simulation makes `setChecksum` throw `RollbackError('desync')` naming that frame. Run
 * it to find non-determinism in a core or in its savestates.
 */
export class SyncTestSession {
  private readonly timeline: Timeline;
  private readonly list = new RequestList();
  private readonly added: Uint8Array;
  /** Frames rolled back every frame. */
  readonly checkDistance: number;
  private delay: number;

  constructor(options: SyncTestOptions) {
    const d = options.checkDistance ?? 2;
    if (!Number.isInteger(d) || d < 1 || d > 60)
      throw new RollbackError('bad-argument', `checkDistance must be 1..60, got ${d}`);
    this.checkDistance = d;
    this.timeline = new Timeline(options.players, options.inputBytes, d, options.predictor ?? repeatLastInput);
    this.added = new Uint8Array(options.players);
    this.delay = checkDelay(options.inputDelay ?? 0);
  }

  /** Number of players. */
  get players(): number {
    return this.timeline.players;
  }

  /** Bytes per player input. */
  get inputBytes(): number {
    return this.timeline.inputBytes;
  }

  /** The next frame to simulate. */
  get currentFrame(): number {
    return this.timeline.currentFrame;
  }

  /** Snapshot slots a driver needs (`checkDistance + 2`). */
  get ringFrames(): number {
    return this.checkDistance + 2;
  }

  /** The local input delay in frames; may change at any time. */
  get inputDelay(): number {
    return this.delay;
  }
  /** Sets the input delay, 0..30 frames (RollbackError `bad-argument` otherwise). */
  set inputDelay(frames: number) {
    this.delay = checkDelay(frames);
  }

  /** Sets `player`'s input for the current frame (+ input delay). Once per player per frame. */
  addLocalInput(player: number, input: Uint8Array): void {
    checkPlayer(player, this.timeline.players);
    if (input.length !== this.timeline.inputBytes)
      throw new RollbackError('bad-argument', `input of ${input.length} bytes, expected ${this.timeline.inputBytes}`);
    if (this.added[player] === 1) throw new RollbackError('bad-state', `input of player ${player} added twice`);
    this.added[player] = 1;
    this.timeline.addLocal(player, this.timeline.currentFrame + this.delay, input);
  }

  /** Every frame's checksum matters here. */
  needsChecksum(_frame: number): boolean {
    return true;
  }

  /**
   * Reports the checksum of the state just saved for `frame`.
   * @throws RollbackError `desync` with `frame` when it differs from the first simulation's.
   */
  setChecksum(frame: number, checksum: bigint): void {
    const prev = this.timeline.checksumOf(frame);
    this.timeline.recordChecksum(frame, checksum);
    if (prev !== undefined && prev !== checksum) {
      throw new RollbackError(
        'desync',
        `frame ${frame}: checksum ${checksum.toString(16)} after resimulation, ${prev.toString(16)} before`,
        frame,
      );
    }
  }

  /**
   * One frame: advance the current frame (save, advance, save), then load the state of
   * `checkDistance` frames back and resimulate up to the current frame. Every player's input must
   * have been added. The returned list is reused by the next call.
   */
  advanceFrame(): readonly SessionRequest[] {
    const t = this.timeline;
    for (let p = 0; p < t.players; p++) {
      if (!t.queues[p]!.has(t.currentFrame))
        throw new RollbackError('bad-state', `no input for player ${p} at frame ${t.currentFrame}`);
    }
    this.list.clear();
    t.saveIfNeeded(this.list);
    t.advance(this.list);
    const from = t.currentFrame - this.checkDistance;
    if (from >= 0) t.resimulateFrom(this.list, from, undefined);
    this.added.fill(0);
    return this.list.done();
  }

  /** Rollbacks and resimulated frames so far. */
  get stats(): {
    /** Forced rollbacks so far (one per `advanceFrame` once `checkDistance` frames exist). */
    readonly rollbacks: number;
    /** Frames simulated again, in total: `checkDistance` per rollback. */
    readonly resimulatedFrames: number;
  } {
    return { rollbacks: this.timeline.rollbacks, resimulatedFrames: this.timeline.resimulatedFrames };
  }
}

function checkDelay(frames: number): number {
  if (!Number.isInteger(frames) || frames < 0 || frames > 30)
    throw new RollbackError('bad-argument', `input delay must be 0..30 frames, got ${frames}`);
  return frames;
}

function checkPlayer(player: number, players: number): void {
  if (!Number.isInteger(player) || player < 0 || player >= players)
    throw new RollbackError('bad-argument', `player ${player} is not 0..${players - 1}`);
}

export { checkDelay, checkPlayer };
