/**
 * The rooms page's pure half: the room table kept from the lobby's feed, its rows and filter, how a
 * browser joins a room (WebRTC through the lobby's signaling, a WebSocket host, or the relay), the
 * link it opens, and what a hosting page announces. No DOM here (see `rooms-view.ts`).
 */
import type { FeedServerMessage, JoinInfo, RoomAnnounce, RoomInfo } from '@netplay/lobby';
import { HOST_PEER } from './share.js';

/** The port `npm run demo:web` starts its in-memory lobby on (see vite.config.ts). */
export const DEFAULT_LOBBY_PORT = 8788;

/** What the page announces: the game and core every page and `netplay host` of Space Racer share. */
export const LOBBY_GAME = 'space-racer';
export const LOBBY_CORE = 'chip8';

/**
 * The lobby the page uses: `?lobby=`, else the build-time `VITE_NETPLAY_LOBBY`, else (dev server)
 * port `devPort` of the host that served the page; undefined when none (the page then works
 * without a lobby, as before).
 */
export function defaultLobbyUrl(
  page: { protocol: string; hostname: string },
  fromUrl: string | undefined,
  configured: string | undefined,
  devPort: number,
): string | undefined {
  if (fromUrl !== undefined) return fromUrl;
  if (configured !== undefined && /^https?:\/\//.test(configured)) return configured;
  if (!(devPort > 0)) return undefined;
  const host = page.hostname.includes(':') ? `[${page.hostname}]` : page.hostname;
  return `${page.protocol === 'https:' ? 'https' : 'http'}://${host}:${devPort}`;
}

/** Applies one feed message to the page's room table (by id); returns whether the table changed. */
export function applyFeed(rooms: Map<string, RoomInfo>, msg: FeedServerMessage): boolean {
  switch (msg.type) {
    case 'snapshot':
      rooms.clear();
      for (const r of msg.rooms) rooms.set(r.id, r);
      return true;
    case 'room':
      rooms.set(msg.room.id, msg.room);
      return true;
    case 'removed':
      return rooms.delete(msg.id);
    default:
      return false;
  }
}

/** The table's filter: a name substring and "only rooms with a free slot". */
export interface RoomsFilter {
  readonly text: string;
  readonly openOnly: boolean;
}

/** How a browser reaches a room's host, best first. */
export type JoinRoute = 'webrtc' | 'ws' | 'relay';

/** One row of the rooms table. */
export interface RoomRow {
  readonly id: string;
  readonly name: string;
  /** `game/core`. */
  readonly game: string;
  readonly mode: string;
  /** `players/slots`. */
  readonly players: string;
  readonly password: boolean;
  readonly full: boolean;
  /** How a browser would join it; undefined: it cannot (UDP only, no relay). */
  readonly route: JoinRoute | undefined;
}

/** The route a browser can use for a listed room (before asking the lobby for join info). */
export function routeOf(room: RoomInfo): JoinRoute | undefined {
  if (room.endpoints.some((e) => e.kind === 'webrtc')) return 'webrtc';
  if (room.endpoints.some((e) => e.kind === 'ws')) return 'ws';
  return room.relay ? 'relay' : undefined;
}

/** The rows to show: matching `filter`, oldest room first (ties by id). */
export function roomRows(rooms: Iterable<RoomInfo>, filter: RoomsFilter): RoomRow[] {
  const text = filter.text.trim().toLowerCase();
  const rows: RoomInfo[] = [];
  for (const r of rooms) {
    if (text !== '' && !r.name.toLowerCase().includes(text)) continue;
    if (filter.openOnly && r.players >= r.slots) continue;
    rows.push(r);
  }
  rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    game: `${r.game}/${r.core}`,
    mode: r.mode,
    players: `${r.players}/${r.slots}`,
    password: r.hasPassword,
    full: r.players >= r.slots,
    route: routeOf(r),
  }));
}

/** Where the page goes to join: a signaling room, or a netplay-ws URL (a host or the relay). */
export type JoinTarget =
  | { readonly kind: 'webrtc'; readonly signal: string; readonly room: string; readonly peer: string }
  | { readonly kind: 'ws'; readonly url: string; readonly via: 'host' | 'relay' };

/**
 * How to join from the lobby's join info: WebRTC through the lobby's signaling (when the room lists
 * a webrtc endpoint whose peer is the page's host name), else the room's WebSocket endpoint, else the
 * relay's netplay-ws URL; undefined when a browser cannot reach it (UDP only).
 */
export function joinTarget(info: JoinInfo): JoinTarget | undefined {
  if (info.signaling !== undefined && info.signaling.peer === HOST_PEER) {
    return { kind: 'webrtc', signal: info.signaling.url, room: info.signaling.room, peer: info.signaling.peer };
  }
  for (const e of info.room.endpoints) if (e.kind === 'ws') return { kind: 'ws', url: e.url, via: 'host' };
  if (info.relay !== undefined && /^wss?:\/\//.test(info.relay.url)) {
    return { kind: 'ws', url: info.relay.url, via: 'relay' };
  }
  return undefined;
}

/** Parameters of the rooms page that travel to the page it opens (the player's own settings). */
const KEPT = ['lobby', 'nick', 'bot', 'seed', 'seconds', 'frames', 'spectate', 'password', 'players', 'ice'];

/**
 * The page URL that joins `target`: `?signal=…&room=…` or `?host=ws://…`, keeping the player's own
 * settings of `pageUrl` (`nick`, `bot`, `seed`, `seconds`, `frames`, `spectate`, `password`, `ice`,
 * `lobby`) and dropping everything else.
 */
export function joinUrl(pageUrl: string, target: JoinTarget): string {
  const url = new URL(pageUrl);
  const q = new URLSearchParams();
  if (target.kind === 'webrtc') {
    q.set('signal', target.signal);
    q.set('room', target.room);
  } else q.set('host', target.url);
  for (const key of KEPT) for (const v of url.searchParams.getAll(key)) q.append(key, v);
  url.search = q.toString();
  url.hash = '';
  return url.toString();
}

/** What a hosting page announces: a WebRTC room (peer `host`) of Space Racer, rollback. */
export function hostAnnouncement(nick: string, players: number, slots: number, hasPassword: boolean): RoomAnnounce {
  return {
    name: `${nick}'s game`.slice(0, 64),
    game: LOBBY_GAME,
    core: LOBBY_CORE,
    mode: 'rollback',
    hasPassword,
    players: Math.min(players, slots),
    slots,
    endpoints: [{ kind: 'webrtc', peer: HOST_PEER }],
  };
}
