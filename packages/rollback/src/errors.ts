/** Why a rollback session refused a call or stopped. */
export type RollbackErrorCode =
  /** An argument is out of range (player number, input size, option). */
  | 'bad-argument'
  /** The call is not allowed in the session's current state (e.g. local input twice for one frame). */
  | 'bad-state'
  /** SyncTest found a frame whose checksum changed when it was simulated again. */
  | 'desync'
  /** A savestate the session needs (to roll back, or to send to a joining peer) is not stored. */
  | 'state-unavailable'
  /** A peer sent a message that breaks the session protocol. */
  | 'protocol'
  /** A peer speaks another session wire version (e.g. version 1 INPUT against version 2). */
  | 'version'
  /** A builder option is missing or out of range; {@link RollbackError.option} names it. */
  | 'invalid-option';

/**
 * The error of @netplay/rollback: a typed `code`, for `desync` the first frame that differs, and
 * for `invalid-option` the name of the option (as the builder spells it, e.g. `maxPrediction`).
 */
export class RollbackError extends Error {
  /** Always `'RollbackError'`; tell kinds apart by `code`. */
  override readonly name = 'RollbackError';
  constructor(
    /** What went wrong. */
    readonly code: RollbackErrorCode,
    message: string,
    /** The frame concerned, when there is one (for `desync`: the first frame whose checksum differs). */
    readonly frame?: number,
    /** For `invalid-option`: the option that was wrong (e.g. `players`, `remote(3)`). */
    readonly option?: string,
  ) {
    super(message);
  }
}
