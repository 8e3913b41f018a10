/** Why a RetroArch session failed. */
export type RetroArchErrorCode =
  /** The host answered the connection header with `FULL`. */
  | 'host-full'
  /** The host answered the connection header with `DENY` (banned). */
  | 'host-denied'
  /** The host's header is not a RetroArch header or speaks a protocol other than 5–6. */
  | 'bad-header'
  /** The host asks for a password and none was given. */
  | 'password-required'
  /** The host dropped the connection after our PASSWORD (wrong password). */
  | 'password-rejected'
  /** The peer sent bytes that do not decode, or a message that is not allowed at this point. */
  | 'protocol'
  /** The peer sent NAK: it drops us. */
  | 'nak'
  /** The handshake did not finish within the configured time. */
  | 'timeout'
  /** A savestate could not be inflated, or announces more than the configured maximum. */
  | 'savestate'
  /**
   * Emulating host or client: the core refused a savestate (truncated, another core's or content's)
   * or a peer sent one where none is accepted; the message carries the core's own error.
   */
  | 'core-state'
  /** The connection closed before the session ended cleanly. */
  | 'closed'
  /** An API call that is not allowed in the current state (e.g. input before playing). */
  | 'state'
  /** Host: too many wrong passwords from this address; refused without checking until the back-off ends. */
  | 'too-many-attempts'
  /** Host: the client sent more messages or bytes per second than the rate limits allow. */
  | 'flood'
  /** Host: the listener holds its maximum of connections (total, or still in the handshake from this address). */
  | 'full';

/** The error the RetroArch client, host and recorder report: a typed `code` and a message. */
export class RetroArchError extends Error {
  /** Always `'RetroArchError'`; tell kinds apart by `code`. */
  override readonly name = 'RetroArchError';
  constructor(
    /** What kind of failure it is. */
    readonly code: RetroArchErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}
