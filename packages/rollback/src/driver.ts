import { type Core, SnapshotRing } from '@netplay/state';
import { RollbackError } from './errors.js';
import type { SessionRequest } from './requests.js';

/** What the driver reports checksums to (every session implements it). */
export interface ChecksumSink {
  /** Whether the checksum of `frame`'s state is wanted (checksums cost a hash of the state). */
  needsChecksum(frame: number): boolean;
  /** Receives the checksum of the state just saved for `frame`. */
  setChecksum(frame: number, checksum: bigint): void;
}

/**
 * Carries out a session's requests on a @netplay/state `Core`, keeping savestates in a
 * `SnapshotRing` (one preallocated slot per frame the session may roll back to). Allocates
 * nothing per frame once the ring's views are made.
 *
 * ```ts
 * const driver = new CoreDriver(core, session.ringFrames);
 * session.addLocalInput(0, pad);
 * driver.run(session.advanceFrame(), session);
 * ```
 */
export class CoreDriver {
  /** The savestates, keyed by frame. */
  readonly ring: SnapshotRing;
  private readonly saver: (target: Uint8Array) => number;
  private readonly loader: (state: Uint8Array) => void;
  /** Frames advanced, resimulations included. */
  advancedFrames = 0;

  constructor(
    /** The core driven. */
    readonly core: Core,
    ringFrames: number,
  ) {
    this.ring = new SnapshotRing(ringFrames, core.stateBytes);
    this.saver = (target) => core.saveInto(target);
    this.loader = (state) => core.load(state);
  }

  /** Stored savestate bytes of `frame` (a view into the ring), for a session's state source. */
  stateOf(frame: number): Uint8Array | undefined {
    return this.ring.get(frame);
  }

  /**
   * Executes `requests` in order: `save` into the ring (and reports the checksum to `sink` when it
   * wants it), `load` from the ring or the given bytes, `advance` with the inputs.
   * @throws RollbackError `state-unavailable` when a load names a frame the ring no longer holds.
   */
  run(requests: readonly SessionRequest[], sink?: ChecksumSink): void {
    const core = this.core;
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]!;
      switch (r.kind) {
        case 'save':
          this.ring.save(r.frame, this.saver);
          if (sink?.needsChecksum(r.frame)) sink.setChecksum(r.frame, core.checksum());
          break;
        case 'load':
          if (r.state !== undefined) core.load(r.state);
          else if (!this.ring.load(r.frame, this.loader))
            throw new RollbackError('state-unavailable', `no savestate of frame ${r.frame} to roll back to`, r.frame);
          break;
        case 'advance': {
          const inputs = r.playerInputs;
          for (let p = 0; p < inputs.length; p++) core.setInput(p, inputs[p]!);
          core.advance();
          this.advancedFrames++;
          break;
        }
      }
    }
  }
}
