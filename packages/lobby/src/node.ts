/**
 * `@netplay/lobby/node`: the lobby server (Node only): {@link startLobby} and its pieces (HTTP API,
 * change feed, relay, stores, Redis signaling router), plus everything of the browser-safe main
 * entry.
 * @packageDocumentation
 */

export { AddressBudgets } from './address-budgets.js';
export { DEFAULT_API_RATE_LIMITS, hashToken, LobbyApi, type LobbyApiOptions } from './api.js';
export { FeedCloseCode, RoomFeed, type RoomFeedOptions } from './feed.js';
export * from './index.js';
export { type AttachableRouter, LobbyServer, type LobbyServerOptions, startLobby } from './lobby-server.js';
export { MemoryRoomStore, type MemoryRoomStoreOptions } from './memory-store.js';
export { ByteBucket, type PipeStats, pipeSockets } from './pipe.js';
export { decodePlacement, encodePlacement, type RelayPlacement } from './placement.js';
export { RelayCloseCode, type RelayControlMessage, RelayServer, type RelayServerOptions } from './relay.js';
export { hostThroughRelay, type RelayHost, type RelayHostOptions } from './relay-host.js';
export type { RoomStore, StoredRoom, StoreEvent } from './store.js';
export {
  UDP_CLIENT_HEADER_BYTES,
  UDP_HOST_HEADER_BYTES,
  UDP_HOST_MAGIC,
  UdpRelay,
  type UdpRelayOptions,
  type UdpRoomStats,
} from './udp-relay.js';
export { hostUdpThroughRelay, type UdpRelayHost, type UdpRelayHostOptions } from './udp-relay-host.js';
