/** What the page reads from its URL: `?host=ws://127.0.0.1:PORT&nick=NAME&bot=1&seconds=N&spectate=1&players=N&seed=N`. */
export interface PageParams {
  /** The host's WebSocket URL (undefined: the page shows how to start one). */
  readonly host: string | undefined;
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
  const players = positive(q.get('players'), 4);
  const seed = q.get('seed');
  return {
    host: host !== null && /^wss?:\/\//.test(host) ? host : undefined,
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
