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
  | 'version';

/** The error of @netplay/rollback: a typed `code` and, for `desync`, the first frame that differs. */
export class RollbackError extends Error {
  override readonly name = 'RollbackError';
  constructor(
    /** What went wrong. */
    readonly code: RollbackErrorCode,
    message: string,
    /** The frame concerned, when there is one (for `desync`: the first frame whose checksum differs). */
    readonly frame?: number,
  ) {
    super(message);
  }
}
