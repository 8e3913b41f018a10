/** Why a transport operation failed or a connection ended. */
export type TransportErrorCode =
  /** The connection (or listener) is closed; nothing can be sent any more. */
  | 'closed'
  /** A message is larger than the channel allows (see {@link ConnectionLimits}). */
  | 'too-large'
  /** The peer stayed silent for longer than the disconnect timeout, or a connect attempt timed out. */
  | 'timeout'
  /** The peer refused the connection (no listener, listener full, channel mismatch, ...). */
  | 'refused'
  /** `send` named a channel that this connection does not have. */
  | 'unknown-channel'
  /** A resource limit was reached (connections per listener, reassembly memory, send queue, ...). */
  | 'limit'
  /** The peer sent more messages or bytes per second than its budget allows (see `RateBudget`). */
  | 'flood'
  /** The peer broke the wire protocol. */
  | 'protocol'
  /** An argument is invalid (bad channel list, bad option value, ...). */
  | 'invalid-argument'
  /** The underlying socket failed (bind error, send error, ...). */
  | 'io';

/**
 * The one error class transports throw and report. `code` says what kind of failure it is; the
 * message explains it for humans.
 */
export class TransportError extends Error {
  /** Always `'TransportError'`; tell kinds apart by `code`. */
  override readonly name = 'TransportError';
  constructor(
    /** What kind of failure it is. */
    readonly code: TransportErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${message} (${code})`, options);
  }
}
