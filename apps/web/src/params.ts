/**
 * What the page reads from its URL: `?host=ws://127.0.0.1:PORT&nick=NAME&bot=1&seconds=N&spectate=1&players=N&seed=N`
 * (a session host over WebSocket), or `?signal=ws://…&room=NAME` (a room of a WebRTC signaling
 * server: the share-a-link flow).
 */
export interface PageParams {
  /** The host's WebSocket URL (undefined: WebRTC through `signal`, or the lobby). */
  readonly host: string | undefined;
  /** The WebRTC signaling server's URL (undefined: the page's default, see `share.ts`). */
  readonly signal: string | undefined;
  /** The lobby (`http(s)://…`) whose rooms the page lists and where "Host a game" announces. */
  readonly lobby: string | undefined;
  /** The room to join over WebRTC (undefined: the page offers "Host a game"). */
  readonly room: string | undefined;
  /** STUN/TURN server URLs for WebRTC (`ice=stun:…`, repeatable; none by default). */
  readonly ice: readonly string[];
  readonly nick: string;
  /** Whether a seeded bot plays instead of the keyboard. */
  readonly bot: boolean;
  /** The bot's PRNG seed (default 2 + the slot, like the CLI's `join --bot`). */
  readonly seed: number | undefined;
  /** Stop after this many seconds of play (undefined: until the page closes). */
  readonly seconds: number | undefined;
  /** Stop once this many frames are final (undefined: no limit). */
  readonly frames: number | undefined;
  readonly spectate: boolean;
  /** The host's player count (the core gets that many ports, at least 2). */
  readonly players: number;
  readonly password: string | undefined;
}

/** A signaling room name: 1–64 of `A-Z a-z 0-9 . _ ~ -` (the signaling protocol's rule). */
export const ROOM_NAME = /^[A-Za-z0-9._~-]{1,64}$/;

function positive(text: string | null, max: number): number | undefined {
  if (text === null || text === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 && n <= max ? n : undefined;
}

function flag(text: string | null): boolean {
  return text !== null && text !== '0' && text !== 'false';
}

/** Parses the page's query string; bad or missing values fall back to the defaults. */
export function parseParams(search: string): PageParams {
  const q = new URLSearchParams(search);
  const host = q.get('host');
  const signal = q.get('signal');
  const room = q.get('room');
  const lobby = q.get('lobby');
  const players = positive(q.get('players'), 4);
  const seed = q.get('seed');
  return {
    host: host !== null && /^wss?:\/\//.test(host) ? host : undefined,
    signal: signal !== null && /^wss?:\/\//.test(signal) ? signal : undefined,
    room: room !== null && ROOM_NAME.test(room) ? room : undefined,
    lobby: lobby !== null && /^https?:\/\/[^/?#\s]+\/?$/.test(lobby) ? lobby.replace(/\/$/, '') : undefined,
    ice: q.getAll('ice').filter((u) => /^(stuns?|turns?):/.test(u)),
    nick: (q.get('nick') ?? 'web').slice(0, 32) || 'web',
    bot: flag(q.get('bot')),
    seed: seed !== null && /^\d+$/.test(seed) ? Number(seed) >>> 0 : undefined,
    seconds: positive(q.get('seconds'), 1e6),
    frames: positive(q.get('frames'), 1e9),
    spectate: flag(q.get('spectate')),
    players: Math.max(2, Math.floor(players ?? 2)),
    password: q.get('password') ?? undefined,
  };
}
