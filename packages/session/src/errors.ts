/** Why a session could not be joined or ended. */
export type SessionErrorCode =
  /** The two ends speak different session protocol versions (or the peer is not a netplay session). */
  | 'version-mismatch'
  /** The password was wrong or missing. */
  | 'bad-password'
  /** The core id or core version differ. */
  | 'core-mismatch'
  /** The content (ROM) hash differs. */
  | 'content-mismatch'
  /** No free player slot (or no room for another spectator). */
  | 'server-full'
  /** The nick is empty or longer than {@link MAX_NICK_BYTES} UTF-8 bytes. */
  | 'bad-nick'
  /** The host chose a scheduler this implementation does not run (yet). */
  | 'unsupported-mode'
  /** The peer sent bytes that do not decode or break the handshake order. */
  | 'protocol'
  /** The handshake did not complete in time. */
  | 'timeout'
  /** A bad option passed to a constructor or method. */
  | 'bad-argument'
  /** The connection closed (by the host, the transport or locally) without a typed refusal. */
  | 'closed';

/** Every code, in wire order (the REFUSE message carries the index). */
export const SESSION_ERROR_CODES: readonly SessionErrorCode[] = [
  'version-mismatch',
  'bad-password',
  'core-mismatch',
  'content-mismatch',
  'server-full',
  'bad-nick',
  'unsupported-mode',
  'protocol',
  'timeout',
  'bad-argument',
  'closed',
];

/**
 * The one error of @netplay/session: a typed `code` and a message meant for people (the CLI
 * prints it). Refusals reach the peer as a REFUSE message and as the connection's close reason
 * `"<code>: <message>"` (cut to 120 bytes by the transport).
 */
export class SessionError extends Error {
  override readonly name = 'SessionError';
  constructor(
    /** What kind of problem it is. */
    readonly code: SessionErrorCode,
    message: string,
  ) {
    super(message);
  }

  /** The close reason for this error: `"<code>: <message>"`. */
  get closeReason(): string {
    return `${this.code}: ${this.message}`;
  }

  /**
   * Parses a close reason made by {@link closeReason}; any other reason gives code `closed` with
   * the reason as the message.
   */
  static fromCloseReason(reason: string): SessionError {
    const i = reason.indexOf(': ');
    if (i > 0) {
      const code = reason.slice(0, i) as SessionErrorCode;
      if (SESSION_ERROR_CODES.includes(code)) return new SessionError(code, reason.slice(i + 2));
    }
    return new SessionError('closed', reason === '' ? 'connection closed' : `connection closed: ${reason}`);
  }
}
