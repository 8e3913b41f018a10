import {
  type FeedServerMessage,
  type FeedSocketConstructor,
  LobbyClient,
  LobbyError,
  type RoomEndpoint,
  type RoomFilter,
  type RoomInfo,
} from '@netplay/lobby';
import { WebSocket } from 'ws';
import { CliError, ExitCode } from './exit-codes.js';

/**
 * Checks `--lobby`: an `http://` or `https://` URL (the lobby node's base, e.g.
 * `http://lobby.example.org:8787`); returns it without trailing slashes.
 * @throws CliError `Usage`.
 */
export function lobbyUrl(text: string | undefined, what = '--lobby'): string {
  if (text === undefined) throw new CliError(ExitCode.Usage, `${what} needs a URL (http://HOST:PORT)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(ExitCode.Usage, `${what} must be an http:// or https:// URL, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(ExitCode.Usage, `${what} must be an http:// or https:// URL, got "${text}"`);
  return text.replace(/\/+$/, '');
}

/**
 * `ws`'s WebSocket with an error listener: `LobbyClient.watch` sets no `onerror`, and a `ws`
 * socket that fails to connect with no listener throws; the close that follows reports it.
 */
class FeedSocket extends WebSocket {
  constructor(url: string) {
    super(url, { perMessageDeflate: false });
    this.on('error', () => {});
  }
}

/** A {@link LobbyClient} for the CLI (Node: `ws`'s WebSocket for the feed). */
export function lobbyClient(url: string): LobbyClient {
  return new LobbyClient(url, { WebSocket: FeedSocket as unknown as FeedSocketConstructor });
}

/**
 * A lobby failure as the CLI's error: no such room → `NoRoom`; the lobby cannot be reached or
 * refuses (rate limits, caps, Redis down) → `Network`, naming the lobby and its reason.
 */
export function lobbyFailure(e: unknown, url: string, what: string): unknown {
  if (!(e instanceof LobbyError)) return e;
  if (e.code === 'not-found')
    return new CliError(
      ExitCode.NoRoom,
      `${what}: the lobby ${url} has no such room (${e.message}; it may have ended or expired)`,
    );
  if (e.code === 'io') return new CliError(ExitCode.Network, `cannot reach the lobby ${url}: ${e.message}`);
  return new CliError(ExitCode.Network, `${what}: the lobby ${url} refused: ${e.code}: ${e.message}`);
}

/** How a room is reached, for the table: its endpoints' kinds, and `+relay` when a relay carries it. */
export function roomTransport(room: RoomInfo): string {
  const kinds = [...new Set(room.endpoints.map((e: RoomEndpoint) => e.kind))];
  return `${kinds.join(',') || '-'}${room.relay ? '+relay' : ''}`;
}

const COLUMNS = ['ID', 'NAME', 'GAME', 'MODE', 'PLAYERS', 'PASSWORD', 'TRANSPORT'] as const;

/** One row of {@link roomsTable}. */
function roomRow(room: RoomInfo): string[] {
  return [
    room.id,
    room.name,
    `${room.game} (${room.core})`,
    room.mode,
    `${room.players}/${room.slots}`,
    room.hasPassword ? 'yes' : 'no',
    roomTransport(room),
  ];
}

/** The rooms as an aligned text table (a header line, then one line per room). */
export function roomsTable(rooms: readonly RoomInfo[]): string[] {
  const rows = [[...COLUMNS], ...rooms.map(roomRow)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

/** One line of `rooms --watch` for a feed message (undefined for none). */
export function feedLine(msg: FeedServerMessage): string | undefined {
  switch (msg.type) {
    case 'room':
      return `room ${roomRow(msg.room).join('  ')}`;
    case 'removed':
      return `gone ${msg.id} (${msg.reason})`;
    default:
      return undefined;
  }
}

/** Reads the `rooms` filter options. @throws CliError `Usage` for a bad value. */
export function roomFilter(values: {
  game?: string;
  core?: string;
  mode?: string;
  password?: string;
  open?: boolean;
  search?: string;
}): RoomFilter {
  const password = values.password;
  if (password !== undefined && password !== 'yes' && password !== 'no')
    throw new CliError(ExitCode.Usage, `--password must be yes or no, got "${password}"`);
  return {
    ...(values.game !== undefined ? { game: values.game } : {}),
    ...(values.core !== undefined ? { core: values.core } : {}),
    ...(values.mode !== undefined ? { mode: values.mode as RoomFilter['mode'] & string } : {}),
    ...(password !== undefined ? { hasPassword: password === 'yes' } : {}),
    ...(values.open ? { open: true } : {}),
    ...(values.search !== undefined ? { q: values.search } : {}),
  };
}

/** Parses `udp://HOST:PORT` (IPv6 in brackets). */
export function udpEndpoint(url: string): { host: string; port: number } | undefined {
  const m = /^udp:\/\/(?:\[([^\]]+)\]|([^:/]+)):(\d{1,5})$/.exec(url);
  if (!m) return undefined;
  const port = Number(m[3]);
  return port >= 1 && port <= 65535 ? { host: (m[1] ?? m[2])!, port } : undefined;
}
