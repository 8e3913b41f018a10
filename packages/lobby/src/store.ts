import type { RoomInfo } from './room.js';

/** A room as a store holds it: the public info plus what only the lobby sees. */
export interface StoredRoom {
  readonly info: RoomInfo;
  /** SHA-256 (hex) of the room token. */
  readonly tokenHash: string;
  /** The announcing address (`addressKey`), for per-address caps. */
  readonly address: string;
}

/** A change in a store, seen by every node subscribed to it. */
export type StoreEvent =
  | { readonly type: 'put'; readonly room: StoredRoom }
  | { readonly type: 'removed'; readonly id: string; readonly reason: 'deleted' | 'expired' };

/**
 * Where rooms and relay placements live: {@link MemoryRoomStore} (one node) or
 * `RedisRoomStore` (any number of nodes sharing one Redis). Every record has a TTL, so a
 * room whose host (or node) stops heartbeating vanishes.
 */
export interface RoomStore {
  /** Creates or refreshes a room for `ttlMs`; subscribers get `put`. */
  put(room: StoredRoom, ttlMs: number): Promise<void>;
  get(id: string): Promise<StoredRoom | undefined>;
  /** Removes a room; subscribers get `removed` (`deleted`). False when there was none. */
  delete(id: string): Promise<boolean>;
  /** Every live room (order unspecified). */
  list(): Promise<StoredRoom[]>;
  /** Rooms live now (may count a just-expired one). */
  count(): Promise<number>;
  /** Records that the relay for `room` is served at `url` (a node's relay URL), for `ttlMs`. */
  setRelay(room: string, url: string, ttlMs: number): Promise<void>;
  getRelay(room: string): Promise<string | undefined>;
  deleteRelay(room: string, url: string): Promise<void>;
  /** Calls `listener` for every change (removals by expiry included, within the store's sync period). */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /** Stops timers and connections; with `abandon`, leaves everything in place as a crashed node would. */
  close(abandon?: boolean): Promise<void>;
}
