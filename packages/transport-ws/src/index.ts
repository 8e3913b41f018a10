/**
 * `@netplay/transport-ws`: a WebSocket transport for netplay. This entry is browser-safe (no Node
 * API, no `ws`): the connection core, the frame codec and a client on the native `WebSocket`.
 * The server (and a Node client) live in `@netplay/transport-ws/server`.
 * @packageDocumentation
 */

/** @deprecated Moved to @netplay/transport; re-exported here for existing imports. */
export { SendLedger } from '@netplay/transport';
export { attachBrowserSocket, browserSocket, type WebSocketConstructor, type WebSocketLike } from './browser-socket.js';
export { type ConnectOptions, connect, waitOpen } from './client.js';
export { type MappedClose, mapRemoteClose, WsCloseCode } from './close-codes.js';
export { WsConnection, type WsRole, type WsServerHooks } from './connection.js';
export {
  decodeHello,
  decodePingTime,
  decodeWelcome,
  encodeHello,
  encodePing,
  encodeReliable,
  encodeUnreliable,
  encodeWelcome,
  FrameType,
  type Hello,
  MAGIC,
  MAX_LIMIT,
  PING_BYTES,
  PROTOCOL_VERSION,
  RELIABLE_HEADER_BYTES,
  seqNewer,
  UNRELIABLE_HEADER_BYTES,
  unreliableSeq,
  WELCOME_BYTES,
  type Welcome,
} from './frame.js';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_UNRELIABLE_BYTES,
  type ResolvedOptions,
  resolveOptions,
  type WsConnectionOptions,
  wsMaxPayload,
} from './options.js';
export { type FrameCharge, frameCharge } from './rate-guard.js';
export type { WsSocket } from './socket.js';
export type { WsConnectionStats } from './ws-stats.js';
