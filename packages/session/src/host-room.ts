import { SessionError } from './errors.js';
import type { Peer } from './host-peer.js';
import { joinsMidGame } from './host-rejoin.js';
import type { RosterEntry } from './messages.js';
import type { SessionMode } from './mode.js';

/** What the room check needs to know of the host. */
export interface RoomShape {
  readonly mode: SessionMode;
  /** The scheduler runs. */
  readonly started: boolean;
  /** Player slots, the host's included. */
  readonly players: number;
  readonly maxSpectators: number;
}

/**
 * The refusal for one more player (or spectator) among the admitted `peers` (`self` not counted),
 * if there is no room; undefined if there is.
 */
export function roomError(
  room: RoomShape,
  peers: Iterable<Peer>,
  spectate: boolean,
  self?: Peer,
): SessionError | undefined {
  let spectators = 0;
  let players = 1;
  for (const p of peers) {
    if (p === self || (p.stage !== 'playing' && p.stage !== 'spectating')) continue;
    if (p.spectate) spectators++;
    else players++;
  }
  if (spectate) {
    if (spectators >= room.maxSpectators)
      return new SessionError('server-full', `server full: ${room.maxSpectators} spectators already watch`);
    return undefined;
  }
  // The same nick reconnecting from the same address takes its own slot back.
  if (self?.replaces !== undefined && self.replaces.stage === 'playing') return undefined;
  if (players >= room.players)
    return new SessionError('server-full', `server full: all ${room.players} player slots are taken`);
  if (room.started && !joinsMidGame(room.mode))
    return new SessionError(
      'server-full',
      `server full: the game is running and mode ${room.mode} cannot take a player mid-game` +
        ` (${room.players - players} of ${room.players} slots empty${room.mode === 'rollback' ? '; spectators can join' : ''})`,
    );
  return undefined;
}

/** `nick`, or `nick (2)`, `nick (3)`, … : the first that neither the host nor a peer in `taken` has. */
export function uniqueNick(nick: string, hostNick: string, taken: { has(nick: string): boolean }): string {
  if (nick !== hostNick && !taken.has(nick)) return nick;
  for (let i = 2; ; i++) {
    const candidate = `${nick} (${i})`;
    if (candidate !== hostNick && !taken.has(candidate)) return candidate;
  }
}

/** The players (the host at slot 0, then every admitted player) as SYNC lists them. */
export function rosterOf(hostNick: string, peers: Iterable<Peer>): RosterEntry[] {
  const roster: RosterEntry[] = [{ slot: 0, nick: hostNick }];
  for (const p of peers)
    if (p.stage === 'playing' && p.nick !== undefined && p.slot !== undefined)
      roster.push({ slot: p.slot, nick: p.nick });
  return roster;
}
