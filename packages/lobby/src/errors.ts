/** What a lobby refused, as a code; see {@link LobbyError}. */
export type LobbyErrorCode =
  /** The body or message is not JSON (or not UTF-8, or binary where text was expected). */
  | 'bad-json'
  /** A field is missing or wrong; the reason names it. */
  | 'bad-request'
  /** The body or message is over the size limit. */
  | 'too-large'
  /** No such room (or route). */
  | 'not-found'
  /** The method is not allowed on this route. */
  | 'method'
  /** Missing or wrong room token. */
  | 'forbidden'
  /** A cap was reached: rooms per address, rooms in total, sockets, relay clients. */
  | 'limit'
  /** Over the request or message rate budget. */
  | 'flood'
  /** The store (Redis) cannot be reached. */
  | 'unavailable'
  /** A relay request for a room whose host is not registered here (the reason names the right node). */
  | 'elsewhere'
  /** A relay client whose host did not open its link in time. */
  | 'timeout'
  /** A transport-level failure seen by a client (network, unexpected answer). */
  | 'io';

/** The HTTP status of each refusal. */
export const LOBBY_ERROR_STATUS: Readonly<Record<LobbyErrorCode, number>> = Object.freeze({
  'bad-json': 400,
  'bad-request': 400,
  'too-large': 413,
  'not-found': 404,
  method: 405,
  forbidden: 403,
  limit: 429,
  flood: 429,
  unavailable: 503,
  elsewhere: 409,
  timeout: 504,
  io: 502,
});

/** A typed lobby refusal: `code` says what kind, the message names what was wrong. */
export class LobbyError extends Error {
  /** Always `'LobbyError'`; tell kinds apart by `code`. */
  override readonly name = 'LobbyError';
  constructor(
    /** What kind of refusal it is; the server's HTTP status follows from it ({@link LOBBY_ERROR_STATUS}). */
    readonly code: LobbyErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Whether `value` is a known {@link LobbyErrorCode}. */
export function isLobbyErrorCode(value: unknown): value is LobbyErrorCode {
  return typeof value === 'string' && Object.hasOwn(LOBBY_ERROR_STATUS, value);
}
