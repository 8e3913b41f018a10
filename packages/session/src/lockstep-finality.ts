import type { EndReason, FrameRequest, LockstepEvent, LockstepScheduler } from '@netplay/lockstep';
import { END_TEXT, SessionError } from './errors.js';

/**
 * What the session reads of a lockstep scheduler (every mode of @netplay/lockstep has it): the
 * events of its finality rule and the last frame final for it.
 */
export type FinalityScheduler = LockstepScheduler & {
  /** Interruptions, removals and the end; emptied here. */
  readonly events: LockstepEvent[];
  /** The last frame final for this peer (-1: none). */
  readonly finalFrame: number;
};

/** What {@link LockstepFinality} reports to the session. */
export interface FinalityHandlers {
  /** Frames up to `frame` are final (called with increasing frames only). */
  final(frame: number): void;
  /** (Host) the scheduler removed peer `peer` by the finality rule: its port is neutral from `frame` on. */
  removed(peer: number, frame: number): void;
  /** The scheduler ended (it runs no more frames) for `reason`; `frame` is its last final frame. */
  ended(reason: EndReason, frame: number): void;
}

/**
 * The session's view of a lockstep scheduler's finality (issue 13): after every turn of the
 * runner and after every frame, {@link check} reports the frames that became final (a P2P
 * non-host's finals trail its frames: they wait for the host's progress) and drains the
 * scheduler's `events` (`removed` at the host, `ended` anywhere). Allocation-free when nothing
 * happened (the per-frame path).
 */
export class LockstepFinality {
  private last = -1;
  private over = false;

  constructor(
    private readonly scheduler: FinalityScheduler,
    private readonly on: FinalityHandlers,
  ) {}

  /**
   * The `LockstepRunner` options that drive this: `onFrame` calls `frame` (the session's `frame`
   * event) then {@link check}; `onTurn` calls {@link check}.
   */
  hooks(frame: (req: FrameRequest) => void): { onFrame(req: FrameRequest): void; onTurn(): void } {
    return {
      onFrame: (req) => {
        frame(req);
        this.check();
      },
      onTurn: () => this.check(),
    };
  }

  /** The last frame reported final (-1: none yet). */
  get finalFrame(): number {
    return this.last;
  }

  /** Reports what changed since the last call. */
  check(): void {
    if (this.over) return;
    const s = this.scheduler;
    const f = s.finalFrame;
    if (f > this.last) {
      this.last = f;
      this.on.final(f);
    }
    const events = s.events;
    if (events.length === 0) return;
    for (const e of events.splice(0)) {
      if (e.type === 'removed') this.on.removed(e.peer, e.frame);
      else if (e.type === 'ended' && !this.over) {
        this.over = true;
        this.on.ended(e.reason, e.finalFrame);
      }
    }
  }
}

/** The `SessionError` of a lockstep scheduler's end (the codes and texts rollback's end uses). */
export function endError(reason: EndReason, frame: number, who: 'the host' | 'this peer'): SessionError {
  return new SessionError(reason, `the game ended for ${who} at frame ${frame}: ${END_TEXT[reason]}`);
}
