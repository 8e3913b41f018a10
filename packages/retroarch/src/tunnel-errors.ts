/** Why the tunnel relay refused or closed a connection (or a tunnel value did not parse). */
export type RetroArchTunnelErrorCode =
  /** The first 4 bytes are no tunnel magic (nor `RANP`), or a host sent one it may not send. */
  | 'unknown-magic'
  /** The client opened with `RANP` (no tunnel support): it got the outdated answer. */
  | 'outdated'
  /** `RATS` + an id no session has (or whose host left). */
  | 'no-session'
  /** `RATL` + an id no waiting client has (or it is linked already). */
  | 'no-peer'
  /** A tunnel id, session id or address that does not parse. */
  | 'bad-id'
  /** A relay address that is not `host:port`. */
  | 'bad-address'
  /** The relay holds its maximum of connections, or of connections without a tunnel message from this address. */
  | 'full'
  /** The relay holds its maximum of sessions (in total or for this address). */
  | 'sessions-full'
  /** The session holds its maximum of clients. */
  | 'session-full'
  /** No tunnel message within the pending timeout. */
  | 'timeout'
  /** A client was not linked by the host in time. */
  | 'link-timeout'
  /** The host answered none of the relay's pings. */
  | 'ping-timeout'
  /** A connection made the relay buffer more than its cap (bytes before the link, or unread output). */
  | 'overflow'
  /** A host sent more tunnel messages per second than allowed. */
  | 'flood'
  /** A session's links copied more bytes per second than its bandwidth cap. */
  | 'bandwidth'
  /** The other end of a link closed, or the relay is closing. */
  | 'closed';

/** An error of the RetroArch tunnel relay or its codec: a typed `code` and a message. */
export class RetroArchTunnelError extends Error {
  /** Always `'RetroArchTunnelError'`; tell kinds apart by `code`. */
  override readonly name = 'RetroArchTunnelError';
  constructor(
    /** What kind of failure it is. */
    readonly code: RetroArchTunnelErrorCode,
    message: string,
  ) {
    super(`${message} (${code})`);
  }
}
