import { LobbyError } from './errors.js';

/** Room ids and WebRTC peer names: 1–64 characters of `A-Z a-z 0-9 . _ ~ -` (the signaling names). */
export const ROOM_ID_PATTERN = /^[A-Za-z0-9._~-]{1,64}$/;
/** The session modes a room may announce. */
export const ROOM_MODES = ['rollback', 'lockstep-cs', 'lockstep-p2p', 'frame-advance', 'retroarch'] as const;
/** A session mode. */
export type RoomMode = (typeof ROOM_MODES)[number];
/** Longest `name`, `game`, `core` (characters). */
export const MAX_TEXT_CHARS = 64;
/** Longest endpoint URL (characters). */
export const MAX_URL_CHARS = 256;
/** Most endpoints one room may list. */
export const MAX_ENDPOINTS = 8;
/** Most slots (players) a room may announce. */
export const MAX_SLOTS = 64;

/** A way to reach the host directly: a UDP or WebSocket address, or a WebRTC peer in the room's signaling room. */
export type RoomEndpoint =
  | {
      /** `'udp'`: the host's transport-udp listener. */
      readonly kind: 'udp';
      /** `udp://host:port`, at most {@link MAX_URL_CHARS} characters. */
      readonly url: string;
    }
  | {
      /** `'ws'`: the host's netplay-ws (WebSocket) listener. */
      readonly kind: 'ws';
      /** `ws://host:port` or `wss://…`, at most {@link MAX_URL_CHARS} characters. */
      readonly url: string;
    }
  | {
      /** `'webrtc'`: the host as a peer of the room's signaling room (the join info's `signaling`). */
      readonly kind: 'webrtc';
      /** The host's peer name there ({@link ROOM_ID_PATTERN}). */
      readonly peer: string;
    };

/** What a host announces (the body of `POST /rooms` and `PUT /rooms/:id`). */
export interface RoomAnnounce {
  /** Shown in room lists. */
  readonly name: string;
  /** The game (ROM or title). */
  readonly game: string;
  /** The core that runs it (`chip8`, `nestopia`…). */
  readonly core: string;
  /** The session mode joiners must use (one of {@link ROOM_MODES}): the scheduler, or `retroarch` for a RetroArch host. */
  readonly mode: RoomMode;
  /** Whether the host asks for a password (the lobby never sees it: the host checks it). */
  readonly hasPassword: boolean;
  /** Players in now. */
  readonly players: number;
  /** Player slots in all. */
  readonly slots: number;
  /** Direct endpoints (may be empty: relay or WebRTC only). */
  readonly endpoints: readonly RoomEndpoint[];
}

/** A room as the lobby lists it. */
export interface RoomInfo extends RoomAnnounce {
  /** The room's id, assigned by the lobby at the first announce ({@link ROOM_ID_PATTERN}); the join and heartbeat URLs use it. */
  readonly id: string;
  /** The lobby node the room was last announced through. */
  readonly node: string;
  /** Whether a relay is registered for the room (its URL comes with the join info). */
  readonly relay: boolean;
  /** Wall-clock milliseconds (lobby's clock) of the first announce and of the last heartbeat. */
  readonly createdAt: number;
  /** Wall-clock milliseconds (lobby's clock) of the last announce, update or heartbeat. */
  readonly updatedAt: number;
}

/** A room list filter (query string of `GET /rooms`, `filter` of the feed). Absent fields match all. */
export interface RoomFilter {
  /** Only rooms whose `game` is exactly this (case-sensitive). */
  readonly game?: string;
  /** Only rooms whose `core` is exactly this (case-sensitive). */
  readonly core?: string;
  /** Only rooms of this session mode. */
  readonly mode?: RoomMode;
  /** Only rooms that ask for a password (`true`) or that do not (`false`). */
  readonly hasPassword?: boolean;
  /** Only rooms with a free slot (`players < slots`). */
  readonly open?: boolean;
  /** Only rooms with at least this many players in now. */
  readonly minPlayers?: number;
  /** Only rooms with at most this many players in now. */
  readonly maxPlayers?: number;
  /** Case-insensitive substring of the name. */
  readonly q?: string;
}

/** What `GET /rooms/:id/join` answers: how to reach the host. */
export interface JoinInfo {
  /** The room as the lobby lists it now. */
  readonly room: RoomInfo;
  /** WebRTC signaling: connect to `url`, join room `room`, offer to `peer`. Present when the room lists a webrtc endpoint. */
  readonly signaling?: {
    /** The signaling server's WebSocket URL (`ws://node:port/signal`) of the node that answered. */
    readonly url: string;
    /** The signaling room to join: the lobby room's id. */
    readonly room: string;
    /** The host's peer name in that room (the webrtc endpoint's `peer`). */
    readonly peer: string;
  };
  /**
   * The relay to connect through, when the host registered one: `url` for netplay-ws, and `udp`
   * (`udp://host:port`, the room's UDP port) for transport-udp when the host asked for UDP too.
   */
  readonly relay?: {
    /** The relay's join URL for netplay-ws clients (`ws://node:port/relay/join?room=…`). */
    readonly url: string;
    /** `udp://host:port`: the room's UDP port on the relay's node, when the host registered with UDP. */
    readonly udp?: string;
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasControl(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function text(obj: Record<string, unknown>, key: string, max = MAX_TEXT_CHARS): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.length < 1 || v.length > max || hasControl(v)) {
    throw new LobbyError('bad-request', `${key} must be a string of 1–${max} printable characters`);
  }
  return v;
}

function int(obj: Record<string, unknown>, key: string, min: number, max: number): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new LobbyError('bad-request', `${key} must be an integer from ${min} to ${max}`);
  }
  return v;
}

function parseEndpoint(value: unknown, i: number): RoomEndpoint {
  if (!isRecord(value)) throw new LobbyError('bad-request', `endpoints[${i}] must be an object`);
  const kind = value.kind;
  if (kind === 'webrtc') {
    const peer = value.peer;
    if (typeof peer !== 'string' || !ROOM_ID_PATTERN.test(peer)) {
      throw new LobbyError('bad-request', `endpoints[${i}].peer must be 1–64 characters of A-Z a-z 0-9 . _ ~ -`);
    }
    return { kind, peer };
  }
  if (kind !== 'udp' && kind !== 'ws') {
    throw new LobbyError('bad-request', `endpoints[${i}].kind must be udp, ws or webrtc`);
  }
  const url = text(value, 'url', MAX_URL_CHARS);
  const scheme = kind === 'udp' ? /^udp:\/\/[^\s/]+:\d{1,5}$/ : /^wss?:\/\/[^\s]+$/;
  if (!scheme.test(url)) {
    throw new LobbyError(
      'bad-request',
      `endpoints[${i}].url must look like ${kind === 'udp' ? 'udp://host:port' : 'ws://host:port/path'}`,
    );
  }
  return { kind, url };
}

/** Validates an announce body; throws {@link LobbyError} (`bad-request`) naming the first bad field. */
export function parseAnnounce(value: unknown): RoomAnnounce {
  if (!isRecord(value)) throw new LobbyError('bad-request', 'the body must be a JSON object');
  const name = text(value, 'name');
  const game = text(value, 'game');
  const core = text(value, 'core');
  const mode = value.mode;
  if (typeof mode !== 'string' || !(ROOM_MODES as readonly string[]).includes(mode)) {
    throw new LobbyError('bad-request', `mode must be one of ${ROOM_MODES.join(', ')}`);
  }
  if (typeof value.hasPassword !== 'boolean') throw new LobbyError('bad-request', 'hasPassword must be a boolean');
  const slots = int(value, 'slots', 1, MAX_SLOTS);
  const players = int(value, 'players', 0, slots);
  const raw = value.endpoints ?? [];
  if (!Array.isArray(raw) || raw.length > MAX_ENDPOINTS) {
    throw new LobbyError('bad-request', `endpoints must be an array of at most ${MAX_ENDPOINTS}`);
  }
  const endpoints = raw.map(parseEndpoint);
  return { name, game, core, mode: mode as RoomMode, hasPassword: value.hasPassword, players, slots, endpoints };
}

/** Checks a room id; throws `bad-request`. */
export function checkRoomId(id: unknown): string {
  if (typeof id !== 'string' || !ROOM_ID_PATTERN.test(id)) {
    throw new LobbyError('bad-request', 'room id must be 1–64 characters of A-Z a-z 0-9 . _ ~ -');
  }
  return id;
}

const FILTER_KEYS = ['game', 'core', 'mode', 'hasPassword', 'open', 'minPlayers', 'maxPlayers', 'q'] as const;

function boolParam(v: string, key: string): boolean {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new LobbyError('bad-request', `${key} must be true or false`);
}

/**
 * Reads a {@link RoomFilter} from a query string or a plain object (values as strings, booleans or
 * numbers). Unknown keys and bad values throw `bad-request` naming the key.
 */
export function parseFilter(input: URLSearchParams | Record<string, unknown>): RoomFilter {
  const entries: [string, unknown][] =
    input instanceof URLSearchParams ? [...input.entries()] : isRecord(input) ? Object.entries(input) : [];
  if (!(input instanceof URLSearchParams) && !isRecord(input)) {
    throw new LobbyError('bad-request', 'filter must be an object');
  }
  const out: Record<string, unknown> = {};
  for (const [key, raw] of entries) {
    if (!(FILTER_KEYS as readonly string[]).includes(key)) {
      throw new LobbyError('bad-request', `unknown filter ${key.slice(0, 32)} (known: ${FILTER_KEYS.join(', ')})`);
    }
    const v = typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : raw;
    if (typeof v !== 'string' || v.length > MAX_TEXT_CHARS) {
      throw new LobbyError('bad-request', `filter ${key} must be a string of at most ${MAX_TEXT_CHARS} characters`);
    }
    switch (key) {
      case 'hasPassword':
      case 'open':
        out[key] = boolParam(v, key);
        break;
      case 'minPlayers':
      case 'maxPlayers': {
        const n = Number(v);
        if (!/^\d{1,3}$/.test(v) || n > MAX_SLOTS) throw new LobbyError('bad-request', `${key} must be 0–${MAX_SLOTS}`);
        out[key] = n;
        break;
      }
      case 'mode':
        if (!(ROOM_MODES as readonly string[]).includes(v)) {
          throw new LobbyError('bad-request', `mode must be one of ${ROOM_MODES.join(', ')}`);
        }
        out[key] = v;
        break;
      default:
        out[key] = v;
    }
  }
  return out as RoomFilter;
}

/** The query string for a filter (for `GET /rooms?…`). */
export function filterQuery(filter: RoomFilter): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(filter)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Whether `room` passes `filter`. */
export function matchRoom(room: RoomInfo, filter: RoomFilter): boolean {
  if (filter.game !== undefined && room.game !== filter.game) return false;
  if (filter.core !== undefined && room.core !== filter.core) return false;
  if (filter.mode !== undefined && room.mode !== filter.mode) return false;
  if (filter.hasPassword !== undefined && room.hasPassword !== filter.hasPassword) return false;
  if (filter.open !== undefined && room.players < room.slots !== filter.open) return false;
  if (filter.minPlayers !== undefined && room.players < filter.minPlayers) return false;
  if (filter.maxPlayers !== undefined && room.players > filter.maxPlayers) return false;
  if (filter.q !== undefined && !room.name.toLowerCase().includes(filter.q.toLowerCase())) return false;
  return true;
}
