import type { DirtyPageSet } from '@netplay/state';
/**
 * A message a scheduler wants sent: the runner (or your own shell) hands it to the transport.
 * Envelopes and their bytes are reused by the scheduler once the outbox has been emptied: send
 * them (the transport copies) before emptying it, and keep neither afterwards.
 */
export interface Envelope {
  /** Peer id of the receiver. */
  readonly to: number;
  /** Channel name (see each mode's `channels`). */
  readonly channel: string;
  /** The bytes; valid until the driver empties the outbox and calls the scheduler again (the buffer is then reused). */
  readonly data: Uint8Array;
}

/** What a scheduler asks its driver to do: run one frame with these inputs. */
export interface FrameRequest {
  /** The frame index (0-based: the first frame of the session is frame 0). */
  readonly frame: number;
  /** Every port's input, `ports * inputBytes` bytes, port 0 first. Valid until the next `poll` (the scheduler's own buffer). */
  readonly inputs: Uint8Array;
  /** A machine command applied on this frame before it runs (0 = none); see {@link CommandHandler}. */
  readonly command: number;
}

/**
 * The shape every lockstep scheduler shares. It is sans-I/O: it never reads a clock or touches a
 * socket. The driver feeds it messages (`receive`), local input (`setLocalInput`) and time (the
 * `now` arguments), sends what accumulates in `outbox`, and runs the frames `poll` returns.
 */
export interface LockstepScheduler {
  /** This peer's id (unique in the session). */
  readonly id: number;
  /** The port (player slot) this peer's local input drives, or -1 when it has none (a pure server, a candidate). */
  readonly port: number;
  /** Number of frames run so far: the index of the next frame. */
  readonly nextFrame: number;
  /**
   * Messages waiting to be sent. The driver sends them, then empties the array, preferably with
   * `pop()` (`length = 0` makes V8 free its storage, so the next push allocates). Once emptied, the
   * envelopes and their bytes are reused by the scheduler's next call.
   */
  readonly outbox: Envelope[];
  /** A message from peer `from` arrived on `channel`. */
  receive(from: number, channel: string, data: Uint8Array, now: number): void;
  /** The local player's input is now `input` (`inputBytes` bytes); the scheduler copies it. */
  setLocalInput(input: Uint8Array, now: number): void;
  /** Time passed: send what is due (pings, advances). */
  tick(now: number): void;
  /**
   * The next frame, if its time has come and its inputs are complete; `undefined` means wait. The
   * request object and its `inputs` are reused by the next call: copy what you keep (`logEntry`).
   */
  poll(now: number): FrameRequest | undefined;
  /** When the next frame is due (ms, on the driver's clock). */
  dueAt(): number;
  /** The next time `tick` has work to do, or `Infinity`. */
  nextWakeAt(now: number): number;
}

/** Applies a machine command (reset, power, coin, dip switch, disk) to a core just before a frame. */
export type CommandHandler<C> = (core: C, command: number) => void;

/**
 * Optional hooks of schedulers that need savestates (the mesh's sync blocks and late join). The
 * runner calls them: it saves the core's state when `wantsState(frame)` says so (the state at the
 * start of that frame, frame 0 being power-on), and loads what `takeLoad()` returns.
 */
export interface StatefulScheduler {
  /** Whether the state at the start of `frame` should be handed to {@link storeState}. */
  wantsState(frame: number): boolean;
  /**
   * The state at the start of `frame` (the scheduler keeps the bytes). `dirty`: when the core has a
   * `pageTracker`, the pages written since the first state was stored (the power-on state a late
   * joiner's delta is made against); a scheduler may pass it to `DeltaBase.pageDelta`.
   */
  storeState(frame: number, state: Uint8Array, dirty?: DirtyPageSet): void;
  /** A state to load before the next frame (late join), taken once. */
  takeLoad():
    | {
        /** The frame the state is at the start of: the next frame to run once it is loaded (the scheduler's `nextFrame`). */
        readonly frame: number;
        /** The savestate bytes for the core's `load` (the core's full state size), handed over once. */
        readonly state: Uint8Array;
      }
    | undefined;
}

/** Whether a scheduler implements {@link StatefulScheduler}. */
export function isStateful(s: LockstepScheduler): s is LockstepScheduler & StatefulScheduler {
  return typeof (s as Partial<StatefulScheduler>).wantsState === 'function';
}
