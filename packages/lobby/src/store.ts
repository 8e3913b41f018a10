import type { RoomInfo } from './room.js';

/** A room as a store holds it: the public info plus what only the lobby sees. */
export interface StoredRoom {
  /** The room as the lobby lists it (what clients see). */
  readonly info: RoomInfo;
  /** SHA-256 (hex) of the room token. */
  readonly tokenHash: string;
  /** The announcing address (`addressKey`), for per-address caps. */
  readonly address: string;
}

/** A change in a store, seen by every node subscribed to it. */
export type StoreEvent =
  | {
      /** `'put'`: a room was created or refreshed (announce, update or heartbeat). */
      readonly type: 'put';
      /** The room as stored now. */
      readonly room: StoredRoom;
    }
  | {
      /** `'removed'`: a room is gone. */
      readonly type: 'removed';
      /** The removed room's id. */
      readonly id: string;
      /** `deleted` by {@link RoomStore.delete}, or `expired` when its TTL ran out. */
      readonly reason: 'deleted' | 'expired';
    };

/**
 * Where rooms and relay placements live: {@link MemoryRoomStore} (one node) or
 * `RedisRoomStore` (any number of nodes sharing one Redis). Every record has a TTL, so a
 * room whose host (or node) stops heartbeating vanishes.
 */
export interface RoomStore {
  /** Creates or refreshes a room for `ttlMs`; subscribers get `put`. */
  put(room: StoredRoom, ttlMs: number): Promise<void>;
  /** The live room `id`, or undefined when there is none or its TTL ran out. */
  get(id: string): Promise<StoredRoom | undefined>;
  /** Removes a room; subscribers get `removed` (`deleted`). False when there was none. */
  delete(id: string): Promise<boolean>;
  /** Every live room (order unspecified). */
  list(): Promise<StoredRoom[]>;
  /** Rooms live now (may count a just-expired one). */
  count(): Promise<number>;
  /** Records that the relay for `room` is served at `url` (a node's relay URL), for `ttlMs`. */
  setRelay(room: string, url: string, ttlMs: number): Promise<void>;
  /** The value last recorded by {@link setRelay} for `room` (a placement), or undefined when none is live. */
  getRelay(room: string): Promise<string | undefined>;
  /** Removes the relay record of `room`, but only if it still holds `url`: a node never removes another node's newer placement. */
  deleteRelay(room: string, url: string): Promise<void>;
  /** Calls `listener` for every change (removals by expiry included, within the store's sync period). */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /** Stops timers and connections; with `abandon`, leaves everything in place as a crashed node would. */
  close(abandon?: boolean): Promise<void>;
}
