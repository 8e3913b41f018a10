/**
 * `@netplay/lobby`: the browser-safe half of the netplay lobby: the room model and its validation,
 * the feed protocol and {@link LobbyClient} (on `fetch` and `WebSocket`). The server (HTTP API, feed,
 * signaling, relay, stores) is in `@netplay/lobby/node`.
 * @packageDocumentation
 */
export {
  type Announcement,
  type AnnounceResult,
  type FeedSocketConstructor,
  type FeedSocketLike,
  LobbyClient,
  type LobbyClientOptions,
} from './client.js';
export { isLobbyErrorCode, LOBBY_ERROR_STATUS, LobbyError, type LobbyErrorCode } from './errors.js';
export {
  type FeedClientMessage,
  type FeedServerMessage,
  MAX_FEED_CLIENT_MESSAGE_BYTES,
  parseFeedClientMessage,
  parseFeedServerMessage,
} from './feed-protocol.js';
export {
  checkRoomId,
  filterQuery,
  type JoinInfo,
  MAX_ENDPOINTS,
  MAX_SLOTS,
  MAX_TEXT_CHARS,
  MAX_URL_CHARS,
  matchRoom,
  parseAnnounce,
  parseFilter,
  ROOM_ID_PATTERN,
  ROOM_MODES,
  type RoomAnnounce,
  type RoomEndpoint,
  type RoomFilter,
  type RoomInfo,
  type RoomMode,
} from './room.js';
