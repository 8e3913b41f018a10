/** Codes of {@link LockstepError}. */
export type LockstepErrorCode =
  /** An option or argument is out of range. */
  | 'bad-argument'
  /** A peer sent a message that breaks the protocol (wrong size, impossible frame, unknown type). */
  | 'protocol'
  /** The operation needs a state the scheduler is not in (e.g. sending before being accepted). */
  | 'bad-state'
  /** A builder option is missing or out of range; {@link LockstepError.option} names it. */
  | 'invalid-option';

/** The one error class of @netplay/lockstep: a typed `code`, and for `invalid-option` the option's name. */
export class LockstepError extends Error {
  /** Always `'LockstepError'` (set by the class), so the error reads as such when printed or serialized. */
  override readonly name = 'LockstepError';
  constructor(
    /** What went wrong. */
    readonly code: LockstepErrorCode,
    message: string,
    /** For `invalid-option`: the option that was wrong (e.g. `frameMs`, `peer(2)`). */
    readonly option?: string,
  ) {
    super(message);
  }
}
