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
  | 'closed'
  /**
   * Too many wrong passwords from this address: the host answers without checking the password
   * until the back-off ends ({@link SessionError.retryAfterMs} says when).
   */
  | 'too-many-attempts'
  /** The peer sent more messages or bytes per second than the host's rate limits allow. */
  | 'flood'
  /** Mid-game: the host removed this peer (it went silent or stopped delivering inputs), so it must not play on. */
  | 'removed'
  /** Mid-game: the host was lost and the peers this one still hears are too few to elect another. */
  | 'host-lost'
  /** Mid-game: this peer (host or not) hears too few players to go on (it lost quorum). */
  | 'partitioned';

/** What each end reason of the finality rule means, for people. */
export const END_TEXT: Readonly<Record<'removed' | 'host-lost' | 'partitioned', string>> = {
  removed: 'the host removed this peer (it stopped delivering inputs in time)',
  'host-lost': 'the host was lost and too few players remain in reach to choose another',
  partitioned: 'too few players remain in reach to go on without splitting the game',
};

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
  'too-many-attempts',
  'flood',
  'removed',
  'host-lost',
  'partitioned',
];

/**
 * The one error of @netplay/session: a typed `code` and a message meant for people (the CLI
 * prints it). Refusals reach the peer as a REFUSE message and as the connection's close reason
 * `"<code>: <message>"` (cut to 120 bytes by the transport).
 */
export class SessionError extends Error {
  /** Always `'SessionError'`, so logs and `error.name` checks tell it apart from other errors. */
  override readonly name = 'SessionError';
  /**
   * `too-many-attempts`: how long the address must wait before its next attempt, in ms (read
   * back from the message `"… retry in N ms"` on the refused side).
   */
  readonly retryAfterMs: number | undefined;
  constructor(
    /** What kind of problem it is. */
    readonly code: SessionErrorCode,
    message: string,
  ) {
    super(message);
    const m = code === 'too-many-attempts' ? /retry in (\d+) ms/.exec(message) : null;
    this.retryAfterMs = m ? Number(m[1]) : undefined;
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
