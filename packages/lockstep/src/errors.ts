/** Codes of {@link LockstepError}. */
export type LockstepErrorCode =
  /** An option or argument is out of range. */
  | 'bad-argument'
  /** A peer sent a message that breaks the protocol (wrong size, impossible frame, unknown type). */
  | 'protocol'
  /** The operation needs a state the scheduler is not in (e.g. sending before being accepted). */
  | 'bad-state';

/** The one error class of @netplay/lockstep. */
export class LockstepError extends Error {
  override readonly name = 'LockstepError';
  constructor(
    readonly code: LockstepErrorCode,
    message: string,
  ) {
    super(message);
  }
}
