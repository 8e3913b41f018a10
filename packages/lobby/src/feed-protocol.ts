import { isLobbyErrorCode, LobbyError, type LobbyErrorCode } from './errors.js';
import { parseFilter, type RoomFilter, type RoomInfo } from './room.js';

/** Largest feed message a client may send (bytes). */
export const MAX_FEED_CLIENT_MESSAGE_BYTES = 2048;

/**
 * Feed messages, JSON text over the WebSocket at `/feed` (version 1). The client may send
 * `{"v":1,"type":"filter","filter":{…}}` at any time (the same keys as `GET /rooms`); the server
 * answers with a `snapshot` of the matching rooms, then sends `room` (added or changed and
 * matching) and `removed` (every removal; ids a client never saw are harmless).
 */
export type FeedClientMessage = {
  /** The feed protocol version: always 1. */
  readonly v: 1;
  /** `'filter'`: (re)sets which rooms this socket is told about; the server answers a `snapshot`. */
  readonly type: 'filter';
  /** The rooms to watch; `{}` matches every room. */
  readonly filter: RoomFilter;
};

/** Server → client feed messages; see {@link FeedClientMessage}. */
export type FeedServerMessage =
  | {
      /** The feed protocol version: always 1. */
      readonly v: 1;
      /** `'snapshot'`: the answer to a filter; replaces everything the client knew. */
      readonly type: 'snapshot';
      /** Every matching room, oldest first, at most the feed's `maxSnapshotRooms` (default 500). */
      readonly rooms: readonly RoomInfo[];
    }
  | {
      /** The feed protocol version: always 1. */
      readonly v: 1;
      /** `'room'`: a matching room was announced, updated or heartbeated (every store `put`, so `updatedAt` moves). */
      readonly type: 'room';
      /** The room as it is now. */
      readonly room: RoomInfo;
    }
  | {
      /** The feed protocol version: always 1. */
      readonly v: 1;
      /** `'removed'`: a room is gone (sent for every removal, matching or not). */
      readonly type: 'removed';
      /** The id of the room that is gone. */
      readonly id: string;
      /** `deleted` by its host, or `expired` (no heartbeat within the TTL). */
      readonly reason: 'deleted' | 'expired';
    }
  | {
      /** The feed protocol version: always 1. */
      readonly v: 1;
      /** `'refused'`: the server refuses this socket and closes it right after. */
      readonly type: 'refused';
      /** Why: `limit` (too many sockets), `flood`, `bad-request` / `bad-json` (a bad filter), `unavailable` (the store failed). */
      readonly code: LobbyErrorCode;
      /** A human-readable explanation, at most 200 characters. */
      readonly reason: string;
    };

/** Parses a client feed message; throws {@link LobbyError} (`bad-json`, `bad-request`). */
export function parseFeedClientMessage(text: string): FeedClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LobbyError('bad-json', 'the message is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LobbyError('bad-request', 'the message must be a JSON object');
  }
  const msg = value as Record<string, unknown>;
  if (msg.v !== 1) throw new LobbyError('bad-request', 'v must be 1');
  if (msg.type !== 'filter') throw new LobbyError('bad-request', 'type must be filter');
  const filter = msg.filter ?? {};
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw new LobbyError('bad-request', 'filter must be an object');
  }
  return { v: 1, type: 'filter', filter: parseFilter(filter as Record<string, unknown>) };
}

/** Parses a server feed message (client side); throws {@link LobbyError} (`io`) on anything else. */
export function parseFeedServerMessage(text: string): FeedServerMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LobbyError('io', 'feed message is not JSON');
  }
  const msg = value as Record<string, unknown> | null;
  if (typeof msg !== 'object' || msg === null || msg.v !== 1) throw new LobbyError('io', 'feed message without v 1');
  switch (msg.type) {
    case 'snapshot':
      if (Array.isArray(msg.rooms)) return msg as unknown as FeedServerMessage;
      break;
    case 'room':
      if (typeof msg.room === 'object' && msg.room !== null) return msg as unknown as FeedServerMessage;
      break;
    case 'removed':
      if (typeof msg.id === 'string') return msg as unknown as FeedServerMessage;
      break;
    case 'refused':
      if (isLobbyErrorCode(msg.code) && typeof msg.reason === 'string') return msg as unknown as FeedServerMessage;
      break;
  }
  throw new LobbyError('io', `unexpected feed message type ${String(msg.type).slice(0, 32)}`);
}
